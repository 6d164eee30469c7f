#!/usr/bin/env python3
"""Compares the SASS of two builds' kernels, function by function.

    python3 dev/sass_diff.py OLD.sass NEW.sass [--normalize]

Each input is `cuobjdump -sass libtessera.so` output. Functions are matched
by their (mangled) names; a body's addresses and encodings are dropped.
--normalize also masks constant-bank offsets (c[0x0][0x...]), so that a
kernel whose parameter block moved but whose instructions did not counts as
the same. Prints the counts and the names of functions that differ or
exist on one side only; exits 0 either way.
"""
import re
import sys


def functions(path, normalize):
    """{name: [instruction lines]} of one cuobjdump -sass listing."""
    out, name = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        if name is None:
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*(/\*.*\*/)?\s*$", line)
        if not m:
            continue
        text = m.group(1)
        if normalize:
            text = re.sub(r"c\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]", "c[*][*]", text)
        out[name].append(text)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    normalize = "--normalize" in sys.argv
    old, new = functions(args[0], normalize), functions(args[1], normalize)
    same = [n for n in old if n in new and old[n] == new[n]]
    differ = [n for n in old if n in new and old[n] != new[n]]
    only_old = [n for n in old if n not in new]
    only_new = [n for n in new if n not in old]
    print(f"{'normalized ' if normalize else ''}SASS: {len(same)} functions identical, {len(differ)} differ, "
          f"{len(only_old)} only in old, {len(only_new)} only in new")
    for title, names in (("differ", differ), ("only in old", only_old), ("only in new", only_new)):
        for n in names:
            extra = f" ({len(old[n])} -> {len(new[n])} instructions)" if title == "differ" else ""
            print(f"  {title}: {n}{extra}")


if __name__ == "__main__":
    main()
