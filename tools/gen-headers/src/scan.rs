//! What the generator needs to know about the Rust sources beyond what
//! cbindgen reads: the names to export (cbindgen only emits items reachable
//! from functions unless told), which `c_int` type aliases are C enums and
//! their enumerators in source order, string constants (which cbindgen
//! skips), literal spellings (to keep hex constants hex) and struct tags.

use std::collections::HashMap;
use std::path::Path;

use syn::{Attribute, Expr, Item, Lit, Type, UnOp};

#[derive(Debug, Clone)]
pub struct IntLit {
    /// The literal as written in Rust, without `_` separators or suffix.
    pub text: String,
    pub negative: bool,
    pub value: u128,
}

#[derive(Debug, Clone)]
pub struct ConstInfo {
    pub name: String,
    /// The declared type, as tokens (`u32`, `ocsd_err_t`, `& str`, ...).
    pub ty: String,
    pub lit: Option<IntLit>,
    pub str_val: Option<String>,
    pub docs: Vec<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Scan {
    /// Types (structs, unions, enums, aliases) to export, in source order.
    pub types: Vec<String>,
    /// `pub type X = c_int;` aliases (C enum candidates).
    pub int_aliases: Vec<String>,
    /// Aliases to 64-bit unsigned types (literal suffix `ULL`).
    pub u64_aliases: Vec<String>,
    pub consts: Vec<ConstInfo>,
    /// Extern "C" functions (names).
    pub functions: Vec<String>,
    /// Struct / union / enum tag overrides (`cbindgen:c-tag=...`).
    pub tags: HashMap<String, String>,
}

impl Scan {
    pub fn merge(&mut self, o: Scan) {
        self.types.extend(o.types);
        self.int_aliases.extend(o.int_aliases);
        self.u64_aliases.extend(o.u64_aliases);
        self.consts.extend(o.consts);
        self.functions.extend(o.functions);
        self.tags.extend(o.tags);
    }

    /// Every name this scan defines (for excluding them from other headers).
    pub fn all_names(&self) -> Vec<String> {
        let mut v = self.types.clone();
        v.extend(self.consts.iter().map(|c| c.name.clone()));
        v.extend(self.functions.iter().cloned());
        v
    }
}

fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let Expr::Lit(el) = &nv.value {
                if let Lit::Str(s) = &el.lit {
                    for l in s.value().lines() {
                        out.push(l.to_string());
                    }
                }
            }
        }
    }
    out
}

fn is_ignored(attrs: &[Attribute]) -> bool {
    doc_lines(attrs)
        .iter()
        .any(|l| l.trim() == "cbindgen:ignore")
}

fn is_cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let s = quote::quote!(#a).to_string();
            s.contains("test")
        }
    })
}

fn tag_of(attrs: &[Attribute]) -> Option<String> {
    doc_lines(attrs).iter().find_map(|l| {
        l.trim()
            .strip_prefix("cbindgen:c-tag=")
            .map(|t| t.trim().to_string())
    })
}

fn has_repr_c(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("repr") && {
            let s = quote::quote!(#a).to_string();
            s.contains('C') || s.contains("transparent")
        }
    })
}

fn is_pub(v: &syn::Visibility) -> bool {
    matches!(v, syn::Visibility::Public(_))
}

fn type_str(t: &Type) -> String {
    quote::quote!(#t).to_string()
}

fn last_ident(t: &Type) -> Option<String> {
    if let Type::Path(p) = t {
        p.path.segments.last().map(|s| s.ident.to_string())
    } else {
        None
    }
}

fn int_lit(e: &Expr) -> Option<IntLit> {
    match e {
        Expr::Lit(el) => match &el.lit {
            Lit::Int(i) => {
                let digits = i.base10_digits().parse::<u128>().ok()?;
                let mut text = i.token().to_string().replace('_', "");
                let suffix = i.suffix();
                if !suffix.is_empty() {
                    text.truncate(text.len() - suffix.len());
                }
                Some(IntLit {
                    text,
                    negative: false,
                    value: digits,
                })
            }
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
            let mut l = int_lit(&u.expr)?;
            l.negative = true;
            l.text = format!("-{}", l.text);
            Some(l)
        }
        Expr::Paren(p) => int_lit(&p.expr),
        _ => None,
    }
}

fn str_lit(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(el) => match &el.lit {
            Lit::Str(s) => Some(s.value()),
            Lit::CStr(s) => Some(s.value().to_string_lossy().into_owned()),
            _ => None,
        },
        _ => None,
    }
}

fn scan_items(items: &[Item], out: &mut Scan) {
    for it in items {
        match it {
            Item::Struct(s) if is_pub(&s.vis) && has_repr_c(&s.attrs) && !is_ignored(&s.attrs) => {
                let n = s.ident.to_string();
                if let Some(t) = tag_of(&s.attrs) {
                    out.tags.insert(n.clone(), t);
                }
                out.types.push(n);
            }
            Item::Union(s) if is_pub(&s.vis) && has_repr_c(&s.attrs) && !is_ignored(&s.attrs) => {
                let n = s.ident.to_string();
                if let Some(t) = tag_of(&s.attrs) {
                    out.tags.insert(n.clone(), t);
                }
                out.types.push(n);
            }
            Item::Enum(s) if is_pub(&s.vis) && !is_ignored(&s.attrs) => {
                let n = s.ident.to_string();
                if let Some(t) = tag_of(&s.attrs) {
                    out.tags.insert(n.clone(), t);
                }
                out.types.push(n);
            }
            Item::Type(t) if is_pub(&t.vis) && !is_ignored(&t.attrs) => {
                let n = t.ident.to_string();
                if let Some(tag) = tag_of(&t.attrs) {
                    out.tags.insert(n.clone(), tag);
                }
                match last_ident(&t.ty).as_deref() {
                    Some("c_int") | Some("i32") => out.int_aliases.push(n.clone()),
                    Some("u64") | Some("c_ulonglong") => out.u64_aliases.push(n.clone()),
                    _ => {}
                }
                out.types.push(n);
            }
            Item::Const(c) if is_pub(&c.vis) && !is_ignored(&c.attrs) => {
                out.consts.push(ConstInfo {
                    name: c.ident.to_string(),
                    ty: type_str(&c.ty),
                    lit: int_lit(&c.expr),
                    str_val: str_lit(&c.expr),
                    docs: doc_lines(&c.attrs)
                        .into_iter()
                        .filter(|l| !l.trim_start().starts_with("cbindgen:"))
                        .collect(),
                });
            }
            Item::Fn(f) => {
                let is_extern_c = f
                    .sig
                    .abi
                    .as_ref()
                    .map(|a| a.name.as_ref().map(|n| n.value() == "C").unwrap_or(true))
                    .unwrap_or(false);
                if is_extern_c && is_pub(&f.vis) {
                    out.functions.push(f.sig.ident.to_string());
                }
            }
            Item::Mod(m) if !is_cfg_test(&m.attrs) && !is_ignored(&m.attrs) => {
                if let Some((_, items)) = &m.content {
                    scan_items(items, out);
                }
            }
            _ => {}
        }
    }
}

/// Scan one Rust file (its inline modules too, not `mod x;` files).
pub fn scan_file(path: &Path) -> Result<Scan, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = Scan::default();
    scan_items(&file.items, &mut s);
    Ok(s)
}
