//! A small INI reader for snapshot files: `[section]` headers,
//! `key=value` lines, `;` and `#` comments, surrounding white space ignored.
//! Section names match case-insensitively; order is kept.

use std::path::Path;

#[derive(Debug, Clone, Default)]
pub struct Section {
    pub name: String,
    pub entries: Vec<(String, String)>,
}

impl Section {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Default)]
pub struct Ini {
    pub sections: Vec<Section>,
}

impl Ini {
    pub fn load(path: &Path) -> std::io::Result<Ini> {
        let bytes = std::fs::read(path)?;
        Ok(Ini::parse(&String::from_utf8_lossy(&bytes)))
    }

    pub fn parse(text: &str) -> Ini {
        let mut ini = Ini::default();
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest.split(']').next().unwrap_or("").trim().to_string();
                ini.sections.push(Section { name, entries: Vec::new() });
                continue;
            }
            if let Some((k, v)) = line.split_once('=') {
                if let Some(sec) = ini.sections.last_mut() {
                    sec.entries.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
        }
        ini
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.section(section).and_then(|s| s.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_and_comments() {
        let ini = Ini::parse("; c\n[trace_buffers]\nbuffers=buffer0,buffer1\n\n[buffer0]\n name = ETB_0 \nfile=cstrace.bin\njunk line\n");
        assert_eq!(ini.get("trace_buffers", "buffers"), Some("buffer0,buffer1"));
        assert_eq!(ini.get("BUFFER0", "name"), Some("ETB_0"));
        assert_eq!(ini.get("buffer1", "name"), None);
    }
}
