"""The house's commit messages (docs/CONTRIBUTING.md): a subject of at most 72 characters
(micropython-lib's CI refuses more), a blank line, then the why in a body.

`problems(message, merge)` lists what a message breaks (a merge's needs no body: git
writes none). Run as `python3 -m tests.support.commitmsg FILE`, it is the commit-msg hook
of `.githooks/` (`git config core.hooksPath .githooks` turns it on in a clone) and refuses
a message that breaks a rule, saying which; tests/repo/test_commit_messages.py checks the
commits made since the rule was written down. Standard library only.
"""

import sys

SUBJECT_MAX = 72
SCISSORS = "# ------------------------ >8 ------------------------"


def text_of(message):
    """The message as git keeps it: comment lines and what follows the scissors (git
    commit -v) dropped, trailing blank lines too."""
    lines = []
    for line in message.splitlines():
        if line == SCISSORS:
            break
        if not line.startswith("#"):
            lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


def problems(message, merge=False):
    """What `message` breaks, in words (empty: nothing)."""
    lines = text_of(message)
    if not lines or not lines[0].strip():
        return ["no subject: the first line says what the commit does"]
    found = []
    subject = lines[0]
    if len(subject) > SUBJECT_MAX:
        found.append("the subject is %d characters, at most %d: %r" % (len(subject), SUBJECT_MAX, subject))
    if len(lines) > 1 and lines[1].strip():
        found.append("the second line must be blank: the subject is one line")
    if not merge and not [line for line in lines[2:] if line.strip()]:
        found.append("no body: after a blank line, say why")
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write("usage: python3 -m tests.support.commitmsg MESSAGE_FILE\n")
        return 2
    with open(argv[0], encoding="utf-8", errors="replace") as source:
        found = problems(source.read())
    for problem in found:
        sys.stderr.write("commit message: %s\n" % problem)
    if found:
        sys.stderr.write("(docs/CONTRIBUTING.md, \"Commits\"; the message is kept in .git/COMMIT_EDITMSG)\n")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
