#!/usr/bin/env python3
"""Host-side judgement of a guest run.

  verdict.py splats <console.log>
      Print every kernel splat in the guest console; exit 1 if any.
  verdict.py version <console.log> <kernel-build-dir>
      Exit 1 unless the guest booted exactly the kernel just built.
  verdict.py tap [--kunit-suites N] <output.log> <expected-binaries>
                 [<output.log> <n> ...]
      Count the nested kselftest results of one or more guest boots, and
      with --kunit-suites the results of the N KUnit suites the kernel ran
      at boot, from the console.log next to each output.log; print "N
      passed, N failed, N skipped" (one line per boot first when there are
      several); exit 1 on any failure or on a stream that is cut short.
"""
import os
import re
import sys

SPLATS = [
    r"BUG:", r"WARNING:", r"Oops", r"Kernel panic", r"general protection fault",
    r"possible recursive locking", r"possible circular locking",
    r"inconsistent lock state", r"suspicious RCU usage",
    r"KASAN", r"UBSAN", r"list_\w+ corruption", r"\blist corruption",
    r"soft lockup", r"hard LOCKUP", r"detected stalls? on CPU",
    r"rcu_\w+ self-detected stall", r"blocked for more than \d+ seconds",
    r"page allocation failure", r"Call Trace:",
]
SPLAT_RE = re.compile("|".join(SPLATS))


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", "replace")
    return data.replace("\r", "").split("\n")


def splats(console):
    lines = read_lines(console)
    hits = [i for i, l in enumerate(lines) if SPLAT_RE.search(l)]
    if not hits:
        return 0
    print(f"verdict: {len(hits)} kernel splat line(s) in {console}:")
    shown = set()
    for i in hits[:10]:
        for j in range(max(0, i - 2), min(len(lines), i + 8)):
            if j not in shown:
                shown.add(j)
                print("  console: " + lines[j])
    return 1


def version(console, build):
    with open(f"{build}/include/generated/utsversion.h") as f:
        uts = re.search(r'UTS_VERSION "(.*)"', f.read()).group(1)
    with open(f"{build}/include/config/kernel.release") as f:
        release = f.read().strip()
    for l in read_lines(console):
        if "Linux version " in l:
            if f"Linux version {release} " in l and l.rstrip().endswith(uts):
                return 0
            print(f"verdict: the guest booted a stale kernel:\n  {l}\n"
                  f"  expected {release} {uts}")
            return 1
    print("verdict: no 'Linux version' line in the guest console")
    return 1


def count(output, expected):
    """(passed, failed, skipped, problems) of one guest boot's TAP stream."""
    lines = read_lines(output)
    passed = failed = skipped = 0
    plan = None
    results = 0
    nested = {"ok": 0, "fail": 0, "skip": 0}
    top = re.compile(r"^(not ok|ok) (\d+) (\S+)(.*)$")
    sub = re.compile(r"^# (not ok|ok) \d+ (.*)$")
    for l in lines:
        m = re.match(r"^1\.\.(\d+)$", l)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = sub.match(l)
        if m:
            if m.group(1) == "not ok":
                nested["fail"] += 1
            elif re.search(r"#\s*SKIP", m.group(2)):
                nested["skip"] += 1
            else:
                nested["ok"] += 1
            continue
        m = top.match(l)
        if m:
            results += 1
            is_skip = re.search(r"#\s*SKIP", m.group(4)) is not None
            passed += nested["ok"]
            skipped += nested["skip"]
            failed += nested["fail"]
            any_nested = sum(nested.values())
            if m.group(1) == "not ok" and nested["fail"] == 0:
                # A crash, a timeout or a non-harness failure.
                failed += 1
            elif not any_nested:
                if is_skip:
                    skipped += 1
                else:
                    passed += 1
            nested = {"ok": 0, "fail": 0, "skip": 0}
    problems = []
    if plan is None:
        problems.append("no TAP plan in the guest output")
    elif plan != expected:
        problems.append(f"the guest planned {plan} test binaries, "
                        f"{expected} were asked for")
    if results != expected:
        problems.append(f"{results} of {expected} test binaries reported")
        failed += max(0, expected - results)
    if passed + failed + skipped == 0:
        problems.append("no test ran")
        failed += 1
    return passed, failed, skipped, problems


# KUnit's end-of-suite line and its unindented (suite) results, after the
# console's timestamp.
KUNIT_SUITE = re.compile(r"\] # (\S+): pass:(\d+) fail:(\d+) skip:(\d+) "
                         r"total:(\d+)$")
KUNIT_RESULT = re.compile(r"\] (not ok|ok) \d+ (\S+)")


def count_kunit(console, expected):
    """(passed, failed, skipped, problems) of the KUnit suites in a console."""
    passed = failed = skipped = 0
    suites = set()
    for l in read_lines(console):
        m = KUNIT_SUITE.search(l)
        if m and m.group(1) != "Totals":
            suites.add(m.group(1))
            passed += int(m.group(2))
            failed += int(m.group(3))
            skipped += int(m.group(4))
            continue
        # A suite whose init failed has no summary line, only its result.
        m = KUNIT_RESULT.search(l)
        if m and m.group(1) == "not ok" and m.group(2) not in suites:
            suites.add(m.group(2))
            failed += 1
    problems = []
    if len(suites) != expected:
        problems.append(f"{len(suites)} of {expected} KUnit suites reported "
                        f"in {console}")
        failed += max(0, expected - len(suites))
    return passed, failed, skipped, problems


def summary(passed, failed, skipped):
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    return line


def tap(runs, kunit_suites):
    totals = [0, 0, 0]
    for output, expected in runs:
        passed, failed, skipped, problems = count(output, expected)
        if kunit_suites:
            console = os.path.join(os.path.dirname(output), "console.log")
            kunit = count_kunit(console, kunit_suites)
            print(f"# {console}: KUnit {summary(*kunit[:3])}")
            passed, failed, skipped = (passed + kunit[0], failed + kunit[1],
                                       skipped + kunit[2])
            problems += kunit[3]
        for p in problems:
            print(f"verdict: {output}: {p}")
        if len(runs) > 1:
            print(f"# {output}: {summary(passed, failed, skipped)}")
        totals = [totals[0] + passed, totals[1] + failed, totals[2] + skipped]
    print(summary(*totals))
    return 1 if totals[1] else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "splats":
        return splats(argv[2])
    if len(argv) == 4 and argv[1] == "version":
        return version(argv[2], argv[3])
    if len(argv) >= 2 and argv[1] == "tap":
        kunit_suites = 0
        args = argv[2:]
        if args[:1] == ["--kunit-suites"] and len(args) >= 2:
            kunit_suites = int(args[1])
            args = args[2:]
        if args and len(args) % 2 == 0:
            return tap([(args[i], int(args[i + 1]))
                        for i in range(0, len(args), 2)], kunit_suites)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
