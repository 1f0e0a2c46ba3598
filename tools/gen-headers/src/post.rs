//! Post-processing of cbindgen's C output into OpenCSD's header shapes.

use std::collections::{HashMap, HashSet};

use crate::scan::{ConstInfo, Scan};

/// Rust keywords that are valid C identifiers: a Rust field `type_` is the
/// C field `type`.
const RUST_KEYWORDS: &[&str] = &[
    "type", "match", "ref", "mod", "fn", "impl", "loop", "move", "mut", "pub", "self", "super",
    "trait", "use", "where", "crate", "dyn", "let", "in", "as", "box", "async", "await", "yield",
    "macro", "priv", "final", "override", "virtual", "abstract", "become", "typeof", "unsized",
    "try", "gen",
];

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Index of the first line of the doc comment block that ends right above
/// line `i` (or `i` itself if there is none).
fn comment_start(lines: &[String], i: usize) -> usize {
    if i == 0 {
        return i;
    }
    let prev = lines[i - 1].trim();
    if prev.ends_with("*/") {
        let mut j = i - 1;
        loop {
            if lines[j].trim_start().starts_with("/*") {
                return j;
            }
            if j == 0 {
                return i;
            }
            j -= 1;
        }
    }
    let mut j = i;
    while j > 0 && lines[j - 1].trim_start().starts_with("//") {
        j -= 1;
    }
    j
}

fn define_re(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("#define ")?;
    let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
    let name = &rest[..end];
    let after = &rest[end..];
    if after.starts_with('(') {
        return None; // function-like macro
    }
    Some((name, after.trim()))
}

/// C spelling of an integer literal constant: keep the Rust spelling (hex
/// stays hex), adding `ULL` where a 64-bit value needs it and `U` where a
/// decimal unsigned value does not fit in an `int`.
fn c_literal(c: &ConstInfo, u64_aliases: &HashSet<String>) -> Option<String> {
    let lit = c.lit.as_ref()?;
    if lit.negative {
        return Some(lit.text.clone());
    }
    let ty = c.ty.replace(' ', "");
    let is64 =
        matches!(ty.as_str(), "u64" | "i64" | "usize" | "c_ulonglong") || u64_aliases.contains(&ty);
    let hex = lit.text.starts_with("0x") || lit.text.starts_with("0X");
    let text = if lit.text.starts_with("0o") {
        format!("0{}", &lit.text[2..])
    } else if lit.text.starts_with("0b") {
        lit.value.to_string()
    } else {
        lit.text.clone()
    };
    if is64 && lit.value > 0xFFFF_FFFF {
        Some(format!("{text}ULL"))
    } else if !hex && lit.value > 0x7FFF_FFFF {
        Some(format!("{text}U"))
    } else {
        Some(text)
    }
}

/// Rewrite `#define NAME value` lines of integer-literal constants with the
/// Rust literal's spelling.
pub fn fix_literals(text: &str, scan: &Scan) -> String {
    let u64s: HashSet<String> = scan.u64_aliases.iter().cloned().collect();
    let by_name: HashMap<&str, &ConstInfo> =
        scan.consts.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut out = String::new();
    for line in text.lines() {
        if let Some((name, _)) = define_re(line) {
            if let Some(c) = by_name.get(name) {
                if let Some(v) = c_literal(c, &u64s) {
                    out.push_str(&format!("#define {name} {v}\n"));
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Turn `typedef int X;` plus the `#define`s of the constants declared with
/// type `X` into `typedef enum TAG { ... } X;` (enumerators in source order,
/// with their documentation).
pub fn enumify(text: &str, scan: &Scan, tags: &HashMap<String, String>) -> String {
    let mut lines: Vec<String> = text.lines().map(|s| s.to_string()).collect();
    for alias in &scan.int_aliases {
        let members: Vec<&ConstInfo> = scan
            .consts
            .iter()
            .filter(|c| c.ty.replace(' ', "") == *alias)
            .collect();
        if members.is_empty() {
            continue;
        }
        let td = format!("typedef int {alias};");
        let Some(td_idx) = lines.iter().position(|l| l.trim() == td) else {
            continue;
        };
        // Collect and remove each member's #define (with its doc comment).
        let mut body = Vec::new();
        let mut remove: Vec<(usize, usize)> = Vec::new();
        for m in &members {
            let Some(i) = lines
                .iter()
                .position(|l| define_re(l).map(|(n, _)| n == m.name).unwrap_or(false))
            else {
                continue;
            };
            let (_, value) = define_re(&lines[i]).unwrap();
            let value = value.to_string();
            let start = comment_start(&lines, i);
            for l in &lines[start..i] {
                body.push(format!("  {}", l));
            }
            body.push(format!("  {} = {},", m.name, value));
            let mut end = i + 1;
            if end < lines.len() && lines[end].trim().is_empty() {
                end += 1;
            }
            remove.push((start, end));
        }
        let tag = tags
            .get(alias)
            .cloned()
            .unwrap_or_else(|| format!("_{alias}"));
        let mut en = vec![format!("typedef enum {tag} {{")];
        en.extend(body);
        en.push(format!("}} {alias};"));
        // Replace the typedef, then drop the defines (from the bottom up).
        remove.push((td_idx, td_idx + 1));
        remove.sort();
        let mut new_lines = Vec::new();
        let mut k = 0;
        for (s, e) in remove {
            if s < k {
                continue;
            }
            new_lines.extend_from_slice(&lines[k..s]);
            if s == td_idx {
                new_lines.extend(en.iter().cloned());
            }
            k = e;
        }
        new_lines.extend_from_slice(&lines[k..]);
        lines = new_lines;
    }
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// Marker written before anonymous struct / union members: C11 has them,
/// C99 and C++ have them as a GNU extension, so GCC and Clang builds with
/// `-pedantic` need `__extension__` on them.
pub const ANON_MEMBER: &str = "OCSD_ANON_MEMBER";

/// The definition of [`ANON_MEMBER`], inserted into every header using it.
pub const ANON_MEMBER_DEF: &str =
    "/* Anonymous struct / union members: standard C11; a GNU extension to C99 and C++. */
#ifndef OCSD_ANON_MEMBER
#if defined(__GNUC__) || defined(__clang__)
#define OCSD_ANON_MEMBER __extension__
#else
#define OCSD_ANON_MEMBER
#endif
#endif";

/// True if the `{` at `open` starts an aggregate with no member name after
/// its matching `}` (an anonymous member).
fn is_anonymous_member(chars: &[char], open: usize) -> bool {
    let mut depth = 0;
    for (k, &c) in chars.iter().enumerate().skip(open) {
        if c == '{' {
            depth += 1;
        } else if c == '}' {
            depth -= 1;
            if depth == 0 {
                let rest: String = chars[k + 1..].iter().collect();
                let upto = rest.split(';').next().unwrap_or("");
                return upto.trim().is_empty();
            }
        }
    }
    false
}

/// Insert [`ANON_MEMBER_DEF`] after the includes if the header uses it.
pub fn add_anon_member_def(text: &str) -> String {
    if !text.contains(&format!("{ANON_MEMBER} ")) {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("#include"))
        .or_else(|| lines.iter().position(|l| l.starts_with("#define ")))
        .map(|i| i + 1)
        .unwrap_or(0);
    let mut out: Vec<String> = lines[..at].iter().map(|s| s.to_string()).collect();
    out.push(String::new());
    out.push(ANON_MEMBER_DEF.to_string());
    out.extend(lines[at..].iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// Pretty-print a one-line C declaration (`struct { uint32_t a:1; ... };`)
/// over several lines at the given indent.
fn pretty_c(decl: &str, indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    let pad = |d: usize| format!("{indent}{}", "  ".repeat(d));
    let chars: Vec<char> = decl.trim().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => {
                let kw = cur.trim();
                if (kw == "struct" || kw == "union") && is_anonymous_member(&chars, i) {
                    cur = format!("{ANON_MEMBER} {kw} ");
                }
                cur.push('{');
                out.push(format!("{}{}", pad(depth), cur.trim()));
                cur.clear();
                depth += 1;
            }
            '}' => {
                if !cur.trim().is_empty() {
                    out.push(format!("{}{}", pad(depth), cur.trim()));
                }
                cur.clear();
                depth = depth.saturating_sub(1);
                cur.push('}');
            }
            ';' => {
                cur.push(';');
                out.push(format!("{}{}", pad(depth), cur.trim()));
                cur.clear();
            }
            _ => cur.push(c),
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        out.push(format!("{}{}", pad(depth), cur.trim()));
    }
    out
}

/// Replace each field whose documentation has `cbindgen-c: <C declaration>`
/// lines by that declaration (C bit-fields, anonymous structs and unions).
pub fn replace_cbindgen_c(text: &str) -> String {
    let lines: Vec<String> = text.lines().map(|s| s.to_string()).collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with("/*") {
            // Find the end of this comment block.
            let mut j = i;
            while !lines[j].trim_end().ends_with("*/") && j + 1 < lines.len() {
                j += 1;
            }
            let block = &lines[i..=j];
            let mut decl = String::new();
            let mut kept = Vec::new();
            for l in block {
                let body = l
                    .trim()
                    .trim_start_matches("/**")
                    .trim_start_matches("/*")
                    .trim_end_matches("*/");
                let body = body.trim().trim_start_matches('*').trim();
                if let Some(d) = body.strip_prefix("cbindgen-c:") {
                    decl.push(' ');
                    decl.push_str(d.trim());
                } else {
                    kept.push(l.clone());
                }
            }
            if !decl.is_empty() && j + 1 < lines.len() {
                let field = &lines[j + 1];
                let indent: String = field.chars().take_while(|c| c.is_whitespace()).collect();
                // Keep the rest of the comment if it has any text.
                let has_text = kept.iter().any(|l| {
                    let b = l
                        .trim()
                        .trim_start_matches("/**")
                        .trim_start_matches("/*")
                        .trim_end_matches("*/");
                    !b.trim().trim_start_matches('*').trim().is_empty()
                });
                if has_text {
                    // Drop a trailing empty ` *` line left by the removed one.
                    let mut k = kept.clone();
                    while k.len() >= 2 && k[k.len() - 2].trim() == "*" {
                        k.remove(k.len() - 2);
                    }
                    out.extend(k);
                }
                out.extend(pretty_c(&decl, &indent));
                i = j + 2;
                continue;
            }
            out.extend_from_slice(block);
            i = j + 1;
            continue;
        }
        out.push(lines[i].clone());
        i += 1;
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// Give structs, unions and enums OpenCSD's tag names: `typedef struct X {`
/// becomes `typedef struct _X {` (or the `cbindgen:c-tag=` override).
pub fn rename_tags(text: &str, types: &[String], tags: &HashMap<String, String>) -> String {
    let mut s = text.to_string();
    for t in types {
        let tag = tags.get(t).cloned().unwrap_or_else(|| format!("_{t}"));
        for kw in ["struct", "union"] {
            s = s.replace(
                &format!("typedef {kw} {t} {{"),
                &format!("typedef {kw} {tag} {{"),
            );
            s = s.replace(
                &format!("typedef {kw} {t} {t};"),
                &format!("typedef {kw} {tag} {t};"),
            );
            // References (`struct X field;`) use the typedef name.
            s = replace_word(&s, &format!("{kw} {t}"), t);
        }
    }
    s
}

/// Replace `pat` where it is not part of a longer identifier.
fn replace_word(s: &str, pat: &str, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find(pat) {
        let before_ok = p == 0 || !is_ident_char(rest[..p].chars().last().unwrap());
        let after = &rest[p + pat.len()..];
        let after_ok = after
            .chars()
            .next()
            .map(|c| !is_ident_char(c))
            .unwrap_or(true);
        out.push_str(&rest[..p]);
        if before_ok && after_ok {
            out.push_str(with);
        } else {
            out.push_str(pat);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `type_` (a Rust keyword escaped) is `type` in C: rename such fields and
/// parameters.
pub fn keyword_idents(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("/*") || t.starts_with('*') || t.starts_with("//") || t.starts_with('#') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut l = line.to_string();
        for kw in RUST_KEYWORDS {
            let pat = format!("{kw}_");
            let mut from = 0;
            while let Some(p) = l[from..].find(&pat) {
                let at = from + p;
                let before_ok = at == 0 || !is_ident_char(l[..at].chars().last().unwrap());
                let after = &l[at + pat.len()..];
                let after_ok = after
                    .chars()
                    .next()
                    .map(|c| !is_ident_char(c))
                    .unwrap_or(true);
                if before_ok && after_ok {
                    l = format!("{}{}{}", &l[..at], kw, after);
                    from = at + kw.len();
                } else {
                    from = at + pat.len();
                }
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Collapse runs of blank lines; drop empty ` *` lines that end a comment
/// (left where `cbindgen:` annotation lines were).
pub fn tidy(text: &str) -> String {
    let src: Vec<&str> = text.lines().map(|l| l.trim_end()).collect();
    let mut lines: Vec<&str> = Vec::with_capacity(src.len());
    for (i, l) in src.iter().enumerate() {
        if l.trim() == "*" {
            let mut j = i + 1;
            while j < src.len() && src[j].trim() == "*" {
                j += 1;
            }
            if j < src.len() && src[j].trim() == "*/" {
                continue;
            }
        }
        lines.push(l);
    }
    let mut out = String::new();
    let mut blank = 0;
    for line in lines {
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `#define`s for string constants (cbindgen skips `&str` constants).
pub fn string_defines(scan: &Scan) -> String {
    let mut out = String::new();
    for c in &scan.consts {
        let Some(v) = &c.str_val else { continue };
        let docs: Vec<&String> = c.docs.iter().filter(|d| !d.trim().is_empty()).collect();
        if !docs.is_empty() {
            out.push_str("/**\n");
            for d in docs {
                out.push_str(&format!(
                    " *{}\n",
                    if d.starts_with(' ') {
                        d.to_string()
                    } else {
                        format!(" {d}")
                    }
                ));
            }
            out.push_str(" */\n");
        }
        let esc: String = v
            .chars()
            .flat_map(|ch| match ch {
                '"' => "\\\"".chars().collect::<Vec<_>>(),
                '\\' => "\\\\".chars().collect(),
                '\n' => "\\n".chars().collect(),
                c => vec![c],
            })
            .collect();
        out.push_str(&format!("#define {} \"{}\"\n", c.name, esc));
    }
    out
}
