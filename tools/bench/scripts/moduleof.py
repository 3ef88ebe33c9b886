"""Which runtime module of parts holds each type, as parts.setup says (tools/bench/generic.py).
Its argument (in argument.txt, as heap.run_script writes it): the types. Prints the
modules' names.
"""
import hwsim, machine  # noqa: E401,F401
from parts.setup import module_of

print(" ".join([module_of(kind) for kind in eval(open("argument.txt").read())]))
