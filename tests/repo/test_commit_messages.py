"""Commit messages keep the house's form (tests/support/commitmsg.py, docs/CONTRIBUTING.md):
what the check refuses and accepts, the commit-msg hook of .githooks/ run as git runs it,
and every commit made since the rule was written down (the commit that added the check,
and whatever HEAD has that its parent has not and was committed after it)."""

import os
import subprocess
import sys

from tests.support import ROOT
from tests.support.commitmsg import SUBJECT_MAX, problems

CHECK = "tests/support/commitmsg.py"
HOOK = os.path.join(ROOT, ".githooks", "commit-msg")


def git(*args):
    done = subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)
    assert done.returncode == 0, "git %s: %s" % (" ".join(args), done.stderr)
    return done.stdout


def test_a_message_of_the_house_passes():
    assert problems("parts: a relay's state after a reset\n\nThe pin was read before it was set.\n") == []
    # git's comments and what follows the scissors are not the message
    assert problems("Subject\n\nWhy.\n# Please enter the commit message\n"
                    "# ------------------------ >8 ------------------------\ndiff --git a b\n") == []
    assert problems("x" * SUBJECT_MAX + "\n\nwhy") == []


def test_what_the_check_refuses():
    assert "the subject is 73 characters" in problems("x" * 73 + "\n\nwhy")[0]
    assert problems("Subject\nstill the subject\n\nwhy") == ["the second line must be blank: the subject is one line"]
    assert problems("Subject only\n") == ["no body: after a blank line, say why"]
    assert problems("Subject\n\n\n# only a comment\n") == ["no body: after a blank line, say why"]
    assert problems("\n\nwhy")[0].startswith("no subject")
    assert problems("# nothing but comments\n")[0].startswith("no subject")


def test_a_merge_needs_no_body_but_a_short_subject():
    assert problems("Merge issue 32: one launcher", merge=True) == []
    assert problems("Merge " + "y" * 70, merge=True)


def test_the_hook_refuses_a_long_subject_and_takes_a_good_message(tmp_path):
    bad, good = tmp_path / "bad", tmp_path / "good"
    bad.write_text("z" * 80 + "\n\nwhy\n")
    good.write_text("Subject\n\nWhy it is so.\n")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    refused = subprocess.run([HOOK, str(bad)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode == 1
    assert "the subject is 80 characters, at most 72" in refused.stderr
    taken = subprocess.run([HOOK, str(good)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert (taken.returncode, taken.stderr) == (0, "")


def test_every_commit_since_the_rule_keeps_it():
    added = git("log", "--diff-filter=A", "--format=%H %ct", "--", CHECK).split()
    assert added, "%s is in no commit of this clone's history (a shallow or exported tree?)" % CHECK
    first, since = added[-2], int(added[-1])
    bases = git("rev-list", "--parents", "-n", "1", first).split()[1:]
    log = git("log", "--format=%H%x00%P%x00%ct%x00%B%x1e", "HEAD", *["^" + base for base in bases])
    checked, broken = 0, []
    for entry in log.split("\x1e"):
        if not entry.strip():
            continue
        sha, parents, when, message = entry.strip("\n").split("\x00", 3)
        if int(when) < since:  # made on another branch before the rule: history as it was
            continue
        checked += 1
        for problem in problems(message, merge=len(parents.split()) > 1):
            broken.append("%s %s" % (sha[:10], problem))
    assert checked >= 1  # the commit that added the check at least
    assert broken == []
