#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""md2man.py DOC.md OUT.1 VERSION: render one of perfkit's docs/*.md pages as a manual
page (roff, man macros, tables through tbl), so that the web docs and `man perfkit-CMD`
come from one source.

It knows the Markdown the docs use, and nothing more: "#"/"##"/"###" headings,
paragraphs, fenced code blocks, pipe tables, "-" and "1." lists (with indented
continuation lines), and inline `code`, **bold**, *emphasis* and [links](target).
Anything else is printed as text. The page's name comes from the file name
(docs/perfkit-record.md -> perfkit-record(1)); its one-line description from the first
sentence after the title.
"""
import os
import re
import sys


def esc(text):
    """Escape roff's special characters in running text; characters beyond ASCII become
    groff's \\[uXXXX] (the page is read without preconv)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)


def inline(text):
    out, pos = [], 0
    pattern = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)]+)\)")
    for m in pattern.finditer(text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + esc(m.group(1)) + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + esc(m.group(2)) + "\\fR")
        elif m.group(3) is not None:
            out.append("\\fI" + esc(m.group(3)) + "\\fR")
        else:
            label, target = m.group(4), m.group(5)
            out.append(inline(label))
            if target.startswith("http"):
                out.append(" (" + esc(target) + ")")
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def line_out(text):
    """A text line that roff will not read as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def table(rows):
    # cells split at pipes that are not escaped ("\\|" is a pipe inside a cell)
    cells = []
    for r in rows:
        parts = re.split(r"(?<!\\)\|", r.strip())
        cells.append([c.strip().replace("\\|", "|") for c in parts[1:-1]])
    cells = [r for r in cells if not all(re.fullmatch(r":?-+:?", c) for c in r)]
    if not cells:
        return []
    head, body = cells[0], cells[1:]
    ncol = len(head)
    if ncol == 2:   # option / meaning tables read best as tagged paragraphs
        out = []
        for r in body:
            r = (r + ["", ""])[:2]
            out += [".TP", line_out(inline(r[0])), line_out(inline(r[1]))]
        return out
    # narrow columns: left-aligned, unhyphenated text reads better than justified
    out = [".nh", ".ad l", ".TS", "allbox;", " ".join(["lb"] * ncol), " ".join(["lx"] * ncol) + "."]
    for i, r in enumerate([head] + body):
        r = (r + [""] * ncol)[:ncol]
        out.append("\t".join("T{\n" + line_out(inline(c)) + "\nT}" for c in r))
    out += [".TE", ".ad b", ".hy"]
    return out


def convert(md, name, version):
    out, desc = convert_body(md.splitlines())
    upper = name.upper()
    head = ["'\\\" t", '.TH "%s" "1" "" "perfkit %s" "perfkit manual"' % (upper, version),
            ".SH NAME", "%s \\- %s" % (esc(name), inline(desc or name))]
    if out and not out[0].startswith(".SH"):
        head.append(".SH DESCRIPTION")
    return "\n".join(head + out) + "\n"


def convert_body(lines):
    """roff lines for Markdown lines, and the first sentence after a "# " title."""
    out = []
    title_seen = not any(x.startswith("# ") for x in lines)
    para = []
    desc = None

    def flush():
        nonlocal desc
        if para:
            text = " ".join(p.strip() for p in para)
            if desc is None and title_seen:
                desc = re.split(r"(?<=[.:])\s", text, maxsplit=1)[0].rstrip(".:")
            out.append(".PP")
            out.append(line_out(inline(text)))
            para.clear()

    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.strip() and not para and i + 1 < len(lines) and re.match(r"^:\s", lines[i + 1]):
            # a definition list entry: "TERM", then ":   text" and lines indented by 4
            # (paragraphs, code blocks) that belong to it
            body = [lines[i + 1][1:].strip()]
            i += 2
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                if not lines[i].strip() and not (i + 1 < len(lines) and lines[i + 1].startswith("    ")):
                    break
                body.append(lines[i][4:])
                i += 1
            sub, _ = convert_body(body)
            if sub[:1] == [".PP"]:
                sub = sub[1:]   # the first paragraph is the tagged one's own
            out += [".TP", line_out(inline(ln.strip()))]
            out += ['.IP "" 7' if x == ".PP" else x for x in sub]
            continue
        if ln.lstrip().startswith("```"):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith("```"):
                out.append(line_out(esc(lines[i])))
                i += 1
            out += [".fi", ".RE"]
        elif ln.startswith("# "):
            flush()
            title_seen = True
        elif ln.startswith("## ") or ln.startswith("### "):
            flush()
            level, text = ln.split(" ", 1)
            macro = ".SH" if level == "##" else ".SS"
            text = text.strip().upper() if macro == ".SH" else text.strip()
            out.append(macro + ' "' + inline(text).replace('"', "'") + '"')
        elif ln.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out += table(rows)
            continue
        elif re.match(r"^(\s*)(- |\d+\. )", ln):
            flush()
            m = re.match(r"^(\s*)(- |\d+\. )(.*)", ln)
            depth = len(m.group(1)) // 2
            mark = "\\(bu" if m.group(2) == "- " else m.group(2).strip()
            item = [m.group(3)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and \
                    not re.match(r"^\s*(- |\d+\. )", lines[i]):
                item.append(lines[i].strip())
                i += 1
            if depth:
                out.append(".RS %d" % (2 * depth))
            out += [".IP %s 4" % mark, line_out(inline(" ".join(item)))]
            if depth:
                out.append(".RE")
            continue
        elif not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()
    return out, desc


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: md2man.py DOC.md OUT.1 VERSION")
    src, dst, version = sys.argv[1:]
    name = os.path.splitext(os.path.basename(src))[0]
    with open(src, encoding="utf-8") as f:
        page = convert(f.read(), name, version)
    with open(dst + ".tmp", "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
