//! Property names every provider accepts: `^[a-zA-Z0-9_.-]{1,64}$`, renamed
//! deterministically and kept unique within one object.

use std::collections::HashSet;

/// The longest name accepted.
pub const MAX_NAME_LEN: usize = 64;

fn legal_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Whether `name` is accepted as it is.
pub(crate) fn is_legal(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.chars().all(legal_char)
}

/// `name` with each illegal character replaced by `_`, cut to 64 bytes; `_` for an
/// empty name.
pub fn sanitize_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if legal_char(c) { c } else { '_' })
        .take(MAX_NAME_LEN)
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// Gives each name of one object a legal name that no sibling already uses.
#[derive(Debug, Default)]
pub(crate) struct NameAllocator {
    taken: HashSet<String>,
}

impl NameAllocator {
    /// Reserves the names that are legal already, so renamed ones never take them.
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a String>) -> Self {
        Self {
            taken: names.into_iter().filter(|n| is_legal(n)).cloned().collect(),
        }
    }

    /// The legal name for `name`: itself when legal, else a sanitized, unique form.
    pub(crate) fn assign(&mut self, name: &str) -> String {
        if is_legal(name) {
            return name.to_string();
        }
        let base = sanitize_name(name);
        let mut candidate = base.clone();
        let mut n = 2;
        while self.taken.contains(&candidate) {
            let suffix = format!("_{n}");
            let keep = MAX_NAME_LEN.saturating_sub(suffix.len()).min(base.len());
            candidate = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegal_names_are_renamed_uniquely_and_deterministically() {
        let names: Vec<String> = ["file path", "file_path", "file/path", "ok", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut alloc = NameAllocator::new(&names);
        let assigned: Vec<String> = names.iter().map(|n| alloc.assign(n)).collect();
        assert_eq!(
            assigned,
            vec!["file_path_2", "file_path", "file_path_3", "ok", "_"]
        );
    }

    #[test]
    fn long_names_are_cut_and_stay_unique() {
        let long = "é".repeat(100);
        let names = vec![long.clone(), format!("{long}x")];
        let mut alloc = NameAllocator::new(&names);
        let a = alloc.assign(&names[0]);
        let b = alloc.assign(&names[1]);
        assert!(is_legal(&a) && is_legal(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(a.len(), MAX_NAME_LEN);
    }
}
