#!/usr/bin/env python3
"""make series: write the upstream patch series to out/series/.

Usage: series.py <cache-dir> <repo-dir> <out-dir> [--no-build]

The steps are in mm-replica/steps.  Each is one commit on the pristine
linux-source-6.12 tree (the history of $cache/pristine.git): the hook
patches (or some of their files) the step names, and our new files so far,
some of them cut down to what the steps so far use.  Then:

  - the last commit's tree must equal the tree `make tree` assembles;
  - `git format-patch` writes the series and a cover letter to <out-dir>;
  - `git am` of those files onto a fresh pristine tree must give the same
    tree;
  - scripts/checkpatch.pl --strict must find nothing in any of them;
  - unless --no-build: the kernel (base and replica config fragments)
    must build after every patch, in $cache/build/series.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
# The seed's figures and how close the model must come to them: the
# report's, so that the cover letter judges as the report does.
from report import CALIBRATION_TOLERANCE, SEED  # noqa: E402

AUTHOR = "numa-replica <numa-replica@example.org>"
# Fixed dates, one minute apart, so that the same steps give the same
# series byte for byte.
DATE0 = 1796256000  # 2026-12-03 00:00:00 UTC

SECTION = re.compile(r"^/\* .*: mm/replica/([\w/-]+\.c) \*/$")
SECTION_END = re.compile(r"^#(else|endif) /\* !?(CONFIG_MM_REPLICA|"
                         r"_MM_REPLICA_INTERNAL_H) \*/$")
KUNIT_INCLUDE = re.compile(r'^#include "(tests/[\w-]+\.h)"$')


def run(cmd, cwd=None, env=None, quiet=False):
    res = subprocess.run(cmd, cwd=cwd, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if res.returncode != 0:
        if not quiet:
            sys.stderr.write(res.stdout)
        raise SystemExit(f"series: {' '.join(cmd)} failed "
                         f"(exit {res.returncode})")
    return res.stdout


def parse_steps(path):
    """The steps: dicts of subject, files, patches (name -> None for the
    whole patch or a list of its files), body; and the MAINTAINERS patch."""
    steps, maintainers, cur = [], None, None
    with open(path) as f:
        lines = f.read().split("\n")
    for line in lines:
        if line.startswith("== "):
            cur = {"subject": line[3:].strip(), "files": [], "patches": {},
                   "body": [], "header": True}
            steps.append(cur)
        elif cur is None:
            if line.startswith("maintainers:"):
                maintainers = line.split(":", 1)[1].strip()
        elif cur["header"] and line.startswith("files:"):
            cur["files"] += line.split(":", 1)[1].split()
        elif cur["header"] and line.startswith("patches:"):
            for word in line.split(":", 1)[1].split():
                name, _, only = word.partition(":")
                cur["patches"][name] = only.split(",") if only else None
        else:
            cur["header"] = False
            cur["body"].append(line)
    for step in steps:
        body = "\n".join(step.pop("body")).strip("\n")
        if not body:
            raise SystemExit(f"series: step '{step['subject']}' has no "
                             "commit message")
        step["body"] = body
        del step["header"]
    return steps, maintainers


def patch_files(patch):
    """The files a patch changes, in order."""
    with open(patch) as f:
        return re.findall(r"^\+\+\+ b/(\S+)", f.read(), re.M)


def patch_subset(patch, only):
    """The diff of a patch, or only the sections of the files in @only."""
    with open(patch) as f:
        text = f.read()
    start = text.index("\ndiff --git ") + 1
    end = text.rfind("\n-- \n")
    diff = text[start:end + 1 if end > 0 else len(text)]
    if only is None:
        return diff
    parts = re.split(r"(?m)^(?=diff --git )", diff)
    keep = [p for p in parts
            if p and re.match(r"diff --git a/(\S+) ", p).group(1) in only]
    missing = set(only) - {re.match(r"diff --git a/(\S+) ", p).group(1)
                           for p in keep}
    if missing:
        raise SystemExit(f"series: {os.path.basename(patch)} does not "
                         f"change {', '.join(sorted(missing))}")
    return "".join(keep)


def cut_sections(text, present):
    """Drop the sections headed '/* ...: mm/replica/<file>.c */' whose file
    is not present yet."""
    out, keep = [], True
    for line in text.split("\n"):
        m = SECTION.match(line)
        if m:
            keep = f"mm/replica/{m.group(1)}" in present
        elif SECTION_END.match(line):
            keep = True
        if keep:
            out.append(line)
    # No stubs for what is present so far: no empty #else either.
    return re.sub(r"\n#else /\* !CONFIG_MM_REPLICA \*/\n\n(?=#endif)", "\n",
                  "\n".join(out))


def cut_makefile(text, present):
    """Objects of mm/replica/Makefile whose source is present; a comment
    goes with the object lines that follow it."""
    out, comment = [], []
    for line in text.split("\n"):
        m = re.match(r"^obj-y \+= (.*)$", line)
        if line.startswith("#") and not line.startswith("# SPDX"):
            comment.append(line)
            continue
        if m:
            objs = [o for o in m.group(1).split()
                    if f"mm/replica/{o[:-2]}.c" in present]
            if objs:
                out += comment + [f"obj-y += {' '.join(objs)}"]
            comment = []
            continue
        out += comment + [line]
        comment = []
    text = "\n".join(out + comment)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def cut_kunit(text, present):
    """Drop '#ifdef CONFIG_MM_REPLICA_KUNIT_TEST / #include "tests/x.h" /
    #endif' while mm/replica/tests/x.h is not present."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        if (lines[i] == "#ifdef CONFIG_MM_REPLICA_KUNIT_TEST" and
                i + 2 < len(lines) and lines[i + 2] == "#endif"):
            m = KUNIT_INCLUDE.match(lines[i + 1])
            if m and f"mm/replica/{m.group(1)}" not in present:
                if out and out[-1] == "":
                    out.pop()
                i += 3
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def cut_kconfig(text, used):
    """Drop the config blocks of mm/replica/Kconfig whose symbol no present
    file uses yet (CONFIG_MM_REPLICA itself stays)."""
    blocks = re.split(r"(?m)^(?=config )", text)
    out = [blocks[0]]
    for block in blocks[1:]:
        sym = re.match(r"config (\w+)", block).group(1)
        if sym == "MM_REPLICA" or f"CONFIG_{sym}" in used:
            out.append(block)
    text = "".join(out).rstrip("\n") + "\n"
    return text


def cut_maintainers(final, pristine, present_paths):
    """The MAINTAINERS of the series so far: its entry with the F: lines of
    the files present; none while no file is."""
    entry, orig = final.split("\n"), pristine.split("\n")
    i = 0
    while i < len(orig) and entry[i] == orig[i]:
        i += 1
    block = entry[i:i + len(entry) - len(orig)]

    def present(pattern):
        if pattern.endswith("/"):
            return any(p.startswith(pattern) for p in present_paths)
        return pattern in present_paths

    kept = [ln for ln in block
            if not ln.startswith("F:\t") or present(ln[3:])]
    if not any(ln.startswith("F:\t") for ln in kept):
        return pristine
    return "\n".join(orig[:i] + kept + orig[i:])


class Series:
    def __init__(self, cache, repo, out):
        self.cache, self.repo, self.out = cache, repo, out
        self.tree = os.path.join(cache, "linux-source-6.12")
        self.pristine_git = os.path.join(cache, "pristine.git")
        self.base = run(["git", "--git-dir", self.pristine_git,
                         "rev-parse", "HEAD"]).strip()
        self.newfiles = {}
        for line in run([os.path.join(repo, "boot", "newfiles.sh"),
                         repo]).splitlines():
            src, rel = line.split()
            self.newfiles[rel] = os.path.join(repo, src)
        self.steps, self.maintainers = parse_steps(
            os.path.join(repo, "mm-replica", "steps"))
        with open(os.path.join(repo, "mm-replica", "series")) as f:
            self.patches = [p.strip() for p in f
                            if p.strip() and not p.startswith("#")]

    def check_steps(self):
        """Every new file and every file of every hook patch in exactly one
        step."""
        seen_files, seen_patch = {}, {}
        for n, step in enumerate(self.steps, 1):
            for pat in step["files"]:
                hits = [f for f in self.newfiles
                        if f == pat or (pat.endswith("/") and
                                        f.startswith(pat))]
                if not hits:
                    raise SystemExit(f"series: step {n}: no new file {pat}")
                for f in hits:
                    if f in seen_files:
                        raise SystemExit(f"series: {f} in steps "
                                         f"{seen_files[f]} and {n}")
                    seen_files[f] = n
            for name, only in step["patches"].items():
                if name not in self.patches:
                    raise SystemExit(f"series: step {n}: {name} is not in "
                                     "mm-replica/series")
                for f in only or patch_files(self.patch_path(name)):
                    key = (name, f)
                    if key in seen_patch:
                        raise SystemExit(f"series: {name} {f} in steps "
                                         f"{seen_patch[key]} and {n}")
                    seen_patch[key] = n
        left = sorted(set(self.newfiles) - set(seen_files))
        for name in self.patches:
            if name == self.maintainers:
                continue
            for f in patch_files(self.patch_path(name)):
                if (name, f) not in seen_patch:
                    left.append(f"{name} ({f})")
        if left:
            raise SystemExit("series: in no step: " + ", ".join(left))
        for n, step in enumerate(self.steps, 1):
            step["new"] = sorted(f for f, m in seen_files.items() if m == n)

    def patch_path(self, name):
        return os.path.join(self.repo, "mm-replica", name)

    def git(self, work, *args, **kw):
        return run(["git", "-C", work] + list(args), **kw)

    def fresh(self, name):
        """A clone of the pristine tree at its base commit."""
        work = os.path.join(self.cache, "series", name)
        if not os.path.isdir(os.path.join(work, ".git")):
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(os.path.dirname(work), exist_ok=True)
            run(["git", "clone", "-q", "--shared", self.pristine_git, work])
        self.git(work, "checkout", "-q", "-f", "-B", "series", self.base)
        self.git(work, "clean", "-q", "-f", "-d", "-x")
        self.git(work, "config", "user.name", AUTHOR.split(" <")[0])
        self.git(work, "config", "user.email",
                 AUTHOR.split("<")[1].rstrip(">"))
        return work

    def install(self, work, present):
        """Our new files present so far, cut to what they use."""
        used = ""
        texts = {}
        for rel in sorted(present):
            with open(self.newfiles[rel]) as f:
                text = f.read()
            text = cut_sections(text, present)
            text = cut_kunit(text, present)
            if rel == "mm/replica/Makefile":
                text = cut_makefile(text, present)
            texts[rel] = text
            # Options count as used by code, not by documentation.
            if rel != "mm/replica/Kconfig" and rel.startswith(("mm/",
                                                              "include/")):
                used += text
        for rel, text in texts.items():
            if rel == "mm/replica/Kconfig":
                text = cut_kconfig(text, used)
            path = os.path.join(work, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            shutil.copymode(self.newfiles[rel], path)

    def build_commits(self):
        work = self.fresh("work")
        with open(os.path.join(self.tree, "MAINTAINERS")) as f:
            final_maint = f.read()
        pristine_maint = self.git(work, "show", f"{self.base}:MAINTAINERS")
        present, patched = set(), set()
        for n, step in enumerate(self.steps, 1):
            for name, only in step["patches"].items():
                patched |= set(only or patch_files(self.patch_path(name)))
                diff = patch_subset(self.patch_path(name), only)
                res = subprocess.run(["git", "-C", work, "apply", "--index"],
                                     input=diff, text=True,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
                if res.returncode:
                    sys.stderr.write(res.stdout)
                    raise SystemExit(f"series: step {n}: {name} does not "
                                     "apply")
            present |= set(step["new"])
            self.install(work, present)
            maint = cut_maintainers(final_maint, pristine_maint,
                                    present | patched)
            with open(os.path.join(work, "MAINTAINERS"), "w") as f:
                f.write(maint)
            self.git(work, "add", "-A", "-f")
            date = f"@{DATE0 + 60 * n} +0000"
            msg = (f"{step['subject']}\n\n{step['body']}\n\n"
                   f"Signed-off-by: {AUTHOR}\n")
            env = dict(os.environ, GIT_AUTHOR_DATE=date,
                       GIT_COMMITTER_DATE=date)
            res = subprocess.run(["git", "-C", work, "commit", "-q",
                                  "--author", AUTHOR, "-F", "-"],
                                 input=msg, text=True, env=env,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            if res.returncode:
                sys.stderr.write(res.stdout)
                raise SystemExit(f"series: step {n} commits nothing")
        return work

    def check_final(self, work):
        """The last commit's tree is the assembled tree, for every file
        either touches."""
        changed = self.git(work, "diff", "--name-only", self.base,
                           "HEAD").split()
        ours = set(changed) | set(self.newfiles)
        for name in self.patches:
            ours |= set(patch_files(self.patch_path(name)))
        bad = []
        for rel in sorted(ours):
            a, b = os.path.join(work, rel), os.path.join(self.tree, rel)
            if os.path.exists(a) != os.path.exists(b) or (
                    os.path.exists(a) and
                    open(a, "rb").read() != open(b, "rb").read()):
                bad.append(rel)
        if bad:
            raise SystemExit("series: the last patch's tree differs from "
                             "the assembled tree in " + ", ".join(bad))

    def format(self, work, cover):
        shutil.rmtree(self.out, ignore_errors=True)
        os.makedirs(self.out)
        self.git(work, "format-patch", "-q", "--cover-letter",
                 "--no-signature", "--zero-commit", "--base", self.base,
                 "-o", self.out, f"{self.base}..HEAD")
        names = sorted(os.listdir(self.out))
        cover_path = os.path.join(self.out, names[0])
        with open(cover_path) as f:
            text = f.read()
        subject, body = cover
        text = text.replace("*** SUBJECT HERE ***", subject)
        text = text.replace("*** BLURB HERE ***", body)
        with open(cover_path, "w") as f:
            f.write(text)
        return [os.path.join(self.out, n) for n in names[1:]]

    def check_am(self, patches, work):
        am = self.fresh("am")
        res = subprocess.run(["git", "-C", am, "am", "-q"] + patches,
                             text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        if res.returncode:
            sys.stderr.write(res.stdout)
            raise SystemExit("series: git am of the series failed")
        a = self.git(am, "rev-parse", "HEAD^{tree}").strip()
        b = self.git(work, "rev-parse", "HEAD^{tree}").strip()
        if a != b:
            raise SystemExit("series: git am gives another tree")
        return am

    def checkpatch(self, patches):
        bad = 0
        for p in patches:
            res = subprocess.run([os.path.join(self.tree, "scripts",
                                               "checkpatch.pl"),
                                  "--strict", "--no-tree", "--show-types",
                                  p],
                                 text=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            m = re.search(r"^total: (\d+) errors, (\d+) warnings, "
                          r"(\d+) checks", res.stdout, re.M)
            if not m or any(int(x) for x in m.groups()):
                bad += 1
                print(f"series: checkpatch: {os.path.basename(p)}:")
                print(res.stdout.rstrip())
        if bad:
            raise SystemExit(f"series: checkpatch --strict complains about "
                             f"{bad} patches")
        print(f"series: checkpatch --strict: {len(patches)} patches, "
              "0 errors, 0 warnings, 0 checks")

    def build_each(self, am, patches):
        """Build the kernel after every patch: base + replica fragments."""
        obj = os.path.join(self.cache, "build", "series")
        os.makedirs(obj, exist_ok=True)
        env = dict(os.environ, CCACHE_DIR=os.path.join(self.cache, "ccache"))
        frags = [os.path.join(self.repo, "boot", f)
                 for f in ("base.config", "replica.config")]
        commits = self.git(am, "rev-list", "--reverse",
                           f"{self.base}..HEAD").split()
        jobs = str((os.cpu_count() or 1) + 1)
        for n, commit in enumerate(commits, 1):
            self.git(am, "checkout", "-q", commit)
            run(["make", "-s", "-C", am, f"O={obj}", "tinyconfig"], env=env)
            run([os.path.join(am, "scripts", "kconfig", "merge_config.sh"),
                 "-m", "-O", obj, os.path.join(obj, ".config")] + frags,
                env=env)
            run(["make", "-s", "-C", am, f"O={obj}", "olddefconfig"],
                env=env)
            log = os.path.join(self.out, f"build-{n:02d}.log")
            with open(log, "w") as f:
                res = subprocess.run(
                    ["make", "-C", am, f"O={obj}", "CC=ccache gcc",
                     f"-j{jobs}", "KBUILD_BUILD_USER=numa-replica",
                     "KBUILD_BUILD_HOST=series"],
                    env=env, stdout=f, stderr=subprocess.STDOUT)
            if res.returncode:
                raise SystemExit(f"series: the kernel does not build after "
                                 f"patch {n} ({os.path.basename(patches[n - 1])}), "
                                 f"see {log}")
            with open(log, errors="replace") as f:
                warnings = [line for line in f if "warning:" in line]
            if warnings:
                raise SystemExit(f"series: the kernel builds with warnings "
                                 f"after patch {n}: {warnings[0].strip()}, "
                                 f"see {log}")
            print(f"series: patch {n:2d} builds without warnings")
        self.git(am, "checkout", "-q", "series")


# The presets of make bench as the cover letter names them.
PRESETS = (("numaq", "NUMA-Q"), ("p4", "P4 Xeon MP"), ("modern", "modern"),
           ("altra2s", "2-socket Altra"), ("cxl", "CXL memory node"))


def calibration(s):
    """The model's reproduction of the RFC's SDET figures, and whether
    every one is within its tolerance; the cover letter quotes no gain
    of the model otherwise."""
    parts, ok = [], True
    for preset, tolerance in CALIBRATION_TOLERANCE.items():
        name, seed = dict(PRESETS)[preset], SEED["sdet", preset]
        got = s.get(f"calib_sdet_{preset}_pct")
        if got is None:
            ok = False
            continue
        within = abs(got - seed) <= tolerance
        ok &= within
        parts.append(f"{name} {got:+.1f}% against the RFC's +{seed:.1f}% "
                     f"({'within' if within else 'outside'} "
                     f"{tolerance:.0f} points)")
    return "; ".join(parts) or "not run", ok


def paired_gains(s):
    """The paired gains of the SDET-like load with text and private (the
    2003 RFC's policy) and of cc1 with text, per preset make bench ran,
    each with its sensitivity band."""
    def gain(workload, preset, policy):
        key = f"gain_{workload}_{preset}_{policy}"
        if f"{key}_pct" not in s:
            return None
        low, high = s.get(key + "_band", "nan:nan").split(":")
        return (f"{s[key + '_pct']:+.1f}% ± {s[key + '_ci']:.1f} "
                f"(band {float(low):+.1f} to {float(high):+.1f}%)")

    parts = []
    for preset, name in PRESETS:
        cells = [(label, policy, gain(workload, preset, policy))
                 for label, workload, policy in (
                     ("SDET-like", "sdet", "text"),
                     ("SDET-like", "sdet", "private"),
                     ("cc1", "cc1", "text"))]
        cells = [f"{label} {g} with {policy}"
                 for label, policy, g in cells if g]
        if cells:
            parts.append(f"{name}: " + ", ".join(cells))
    if not parts:
        raise SystemExit("series: no paired gain in out/bench/summary.tsv: "
                         "run make bench first, the cover letter quotes it")
    return "; ".join(parts)


def cover_letter(repo, steps):
    """Subject and body of the cover letter, with the figures of the
    latest make bench and make check runs."""
    out = os.path.join(repo, "out")
    summary = {}
    tsv = os.path.join(out, "bench", "summary.tsv")
    if not os.path.exists(tsv):
        raise SystemExit("series: no out/bench/summary.tsv: run make bench "
                         "first, the cover letter quotes it")
    with open(tsv) as f:
        for line in f:
            k, v = line.rstrip("\n").split("\t")
            summary[k] = v if ":" in v else float(v)
    soak = []
    for name in ("coherence-fuzz", "stress-ng", "upstream-mm"):
        found = None
        for root, _, files in os.walk(os.path.join(out, "check")):
            for fn in files:
                if fn != "output.log":
                    continue
                with open(os.path.join(root, fn), errors="replace") as f:
                    for line in f:
                        m = re.search(rf"({name}: .*)$", line)
                        if m:
                            found = m.group(1).strip()
        if not found:
            raise SystemExit(f"series: no '{name}:' line in out/check: run "
                             "make check first, the cover letter quotes it")
        soak.append(found)
    s = summary
    calibrated, validated = calibration(s)
    figures = "\n".join(textwrap.fill(
        item, width=72, initial_indent="- ", subsequent_indent="  ")
        for item in (
            "Instructions per fault, policy none / vanilla 6.12: "
            f"{s['faults_insn_ratio_none_vs_vanilla']:.4f}.",
            "Mapping a replica / mapping a local original (fault-around): "
            f"{s['faults_insn_ratio_replica_vs_local']:.2f}.",
            "SDET-like load (shell scripts of real programs on every node), "
            f"policy text: {s['sdet_text_local_pct']:.0f}% of text pages "
            "node-local, remote share of user instruction fetches "
            f"{s['sdet_remote_ifetch_pct_text']:.1f}% (none: "
            f"{s['sdet_remote_ifetch_pct_none']:.1f}%).",
            "The model against the RFC's own measurements (SDET under its "
            "policy, kernel text local as its kernels had it): "
            + calibrated + ".",
            ("Modelled throughput gain, paired against none, 95% "
             "interval across boots and the band of the model's "
             "sensitivity costings: " + paired_gains(s) + ".  "
             if validated else
             "No gain of the model is quoted: it does not yet reproduce "
             "the RFC's measurements.  ") +
            "The most replication can give back with text on the SDET-like "
            "load is what remote user instruction "
            "fetches cost beyond local ones without it: "
            f"{s['sdet_user_ifetch_remote_excess_pct_modern']:.1f}% (modern) "
            f"and {s['sdet_user_ifetch_remote_excess_pct_numaq']:.1f}% "
            "(NUMA-Q) of the modelled cycles, as the model's caches keep "
            "most text close.",
            f"Collapse: {s['collapse_insns_per_replica']:.0f} instructions "
            "per replica removed on the first open for write.",
            f"Memory pressure: {s['reclaim_returned']:.0f} of "
            f"{s['reclaim_replicas']:.0f} replicas given back, "
            f"{s['reclaim_oom_kills']:.0f} OOM kills."))
    body = f"""\
Linux keeps one copy of every file page.  On a NUMA machine a task on
one node that runs a binary or a shared library cached on another node
fetches every instruction across the interconnect.  This series adds
page-cache replication: per-node, read-only copies (replicas) of file
pages, mapped into tasks on the node that uses them, removed before
anyone can write the file, and given back first under memory pressure.
It revives the idea of the 2003 RFC as a framework with policies.

Design
------
A replica is a folio of the original's order on one node holding a copy
of an uptodate page-cache folio.  It lives in a per-mapping, per-node
xarray beside the page cache, never in i_pages and never on an LRU list:
it is a non-LRU movable page, which compaction, offlining and CMA move
through its movable operations; it holds a reference on its original.
Replicas exist only while nobody can write the file: writers (open for
write, shared writable mmap, truncation, invalidation) make themselves
visible and then, after a full barrier, remove every replica; a
replica maker publishes its replica and then, after a full barrier,
checks for writers.  One of the two always sees the other, so no
reader on any node sees bytes older than the page cache; writers are
never refused.  Read faults map the local replica
(fault-around too), read(2)/splice(2)/sendfile(2) copy from it once a
page was read remotely read_threshold times.  Replicas take only free
memory above the high watermark, are charged to the memcg of the task
that makes them, are capped per node, and a shrinker with seeks = 0
gives them back before reclaim turns to the page cache.

Policies and interfaces
-----------------------
- none (default): nothing, and every hook is a patched-out static branch
- text: executable file mappings
- private: every MAP_PRIVATE file mapping (the 2003 RFC)
- readonly: files nobody can write, mapped or read with read(2)
- madvise: only ranges opted in with MADV_REPLICATE
The policy is chosen with replica_policy= at boot and switched at run
time in /sys/kernel/mm/replica/policy, beside max_percent and
read_threshold; applications opt ranges in and out with MADV_REPLICATE
and MADV_NOREPLICATE; /proc/vmstat counts nr_replica_pages,
replica_alloc, replica_alloc_fail, replica_map, replica_read,
replica_collapse and replica_reclaim.

Figures
-------
No NUMA hardware was at hand: the benefit is measured in a NUMA memory
model (a QEMU TCG plugin with per-vCPU L1 and L2 caches, a per-node
last-level cache where the machine has one, the NUMA-Q's remote cache
and the EXA chipset's node cache swept over sizes and latencies,
next-line instruction prefetch, coherence between them, and
local/remote latencies from public figures: a 2-socket Skylake-SP,
remote/local 1.61; the 2003 RFC's NUMA-Q, 10; and a 4-node P4 Xeon MP
on IBM's EXA chipset, 2.8).  The RFC reported +43.1% on NUMA-Q and
+8.8% on a 16-way P4 for its SDET runs.
{figures}

Testing
-------
KUnit suites for the store and the registry; kselftests under
tools/testing/selftests/replica/ (placement by move_pages(2), coherence
of every reader across writes, truncation and policy switches, counters,
errors, memory pressure and memcg) on a 2-node guest, debug kernel
(KASAN, lockdep, DEBUG_VM, DEBUG_LIST); latest run:
""" + "\n".join(f"- {line}" for line in soak) + "\n"
    return "mm: NUMA page-cache replication", body


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    cache, repo, out = (os.path.abspath(a) for a in sys.argv[1:4])
    build = "--no-build" not in sys.argv[4:]
    series = Series(cache, repo, out)
    series.check_steps()
    cover = cover_letter(repo, series.steps)
    work = series.build_commits()
    series.check_final(work)
    patches = series.format(work, cover)
    print(f"series: {len(patches)} patches and a cover letter in {out}")
    am = series.check_am(patches, work)
    print("series: git am onto pristine linux-source-6.12 gives the "
          "assembled tree")
    series.checkpatch(patches)
    if build:
        series.build_each(am, patches)
        print(f"series: the kernel builds after each of the {len(patches)} "
              "patches")


if __name__ == "__main__":
    main()
