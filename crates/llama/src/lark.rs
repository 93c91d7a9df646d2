//! GBNF as rein writes it, rewritten in llguidance's Lark syntax: rules become
//! `name: body`, character classes become one-character regular expressions
//! (`[^"\\]` → `/[^"\\]/`), and `start` names the root. Literals, groups, alternatives
//! and repetitions (`*`, `+`, `?`, `{m,n}`) are written the same in both. Each class
//! stays a single-character lexeme, so llguidance's greedy lexer matches exactly
//! what llama.cpp's GBNF sampler matches.

/// Why a grammar could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LarkError(pub(crate) String);

/// The Lark form of `gbnf`, starting at the rule `root`.
pub(crate) fn gbnf_to_lark(gbnf: &str, root: &str) -> Result<String, LarkError> {
    let mut out = format!("start: {root}\n");
    for line in gbnf.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, body)) = line.split_once("::=") else {
            return Err(LarkError(format!("not a rule: {line}")));
        };
        let name = name.trim();
        if name == "start" {
            return Err(LarkError("a rule is named `start`".into()));
        }
        out.push_str(name);
        out.push_str(": ");
        out.push_str(&body_to_lark(body.trim())?);
        out.push('\n');
    }
    Ok(out)
}

/// One rule's body: strings copied, classes rewritten, an empty repetition refused
/// (Lark has no `{0}`).
fn body_to_lark(body: &str) -> Result<String, LarkError> {
    let mut out = String::with_capacity(body.len() + 16);
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                copy_until(&mut chars, &mut out, '"')?;
                out.push('"');
            }
            '[' => {
                out.push_str("/[");
                class_to_regex(&mut chars, &mut out)?;
                out.push_str("]/");
            }
            '{' => {
                let mut repeat = String::new();
                copy_until(&mut chars, &mut repeat, '}')?;
                let bounds: Vec<&str> = repeat.split(',').map(str::trim).collect();
                if bounds.iter().all(|b| *b == "0" || b.is_empty()) {
                    return Err(LarkError(format!("an empty repetition {{{repeat}}}")));
                }
                out.push('{');
                out.push_str(&repeat);
                out.push('}');
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Copies characters up to the unescaped `end` (consumed, not copied); escapes are
/// copied whole.
fn copy_until(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
    end: char,
) -> Result<(), LarkError> {
    while let Some(c) = chars.next() {
        if c == end {
            return Ok(());
        }
        out.push(c);
        if c == '\\' {
            let escaped = chars
                .next()
                .ok_or_else(|| LarkError("a literal ends in `\\`".into()))?;
            out.push(escaped);
        }
    }
    Err(LarkError(format!("no closing `{end}`")))
}

/// The inside of a GBNF class as the inside of a regular expression class: what the
/// regex reads as syntax (`/` ends the Lark regex, `[` opens a nested class, `&`, `~`
/// and `-` pairs are set operations) is escaped; GBNF's escapes (`\\`, `\]`, `\n`,
/// `\xHH`, `\uHHHH`) mean the same in both.
fn class_to_regex(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) -> Result<(), LarkError> {
    if chars.peek() == Some(&'^') {
        chars.next();
        out.push('^');
    }
    while let Some(c) = chars.next() {
        match c {
            ']' => return Ok(()),
            '\\' => {
                let escaped = chars
                    .next()
                    .ok_or_else(|| LarkError("a class ends in `\\`".into()))?;
                out.push('\\');
                out.push(escaped);
            }
            '/' | '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '-' if chars.peek() == Some(&'-') => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    Err(LarkError("a class has no closing `]`".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_classes_and_repetitions_are_rewritten() {
        let gbnf = concat!(
            "root ::= calls\n",
            "json-char ::= [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt])\n",
            "calls ::= \"<tool_call>\" \"\\n\"? json-char{0,200} ([0-9]{1} | [1-9] [0-9]{1,17})\n",
            "odd ::= [/[&~a-] [^\\]]\n",
        );
        let lark = gbnf_to_lark(gbnf, "root").unwrap();
        assert_eq!(
            lark,
            concat!(
                "start: root\n",
                "root: calls\n",
                "json-char: /[^\"\\\\\\x7F\\x00-\\x1F]/ | \"\\\\\" (/[\"\\\\\\/bfnrt]/)\n",
                "calls: \"<tool_call>\" \"\\n\"? json-char{0,200} (/[0-9]/{1} | /[1-9]/ /[0-9]/{1,17})\n",
                "odd: /[\\/\\[\\&\\~a-]/ /[^\\]]/\n",
            )
        );
    }

    #[test]
    fn what_lark_cannot_say_is_an_error() {
        assert!(gbnf_to_lark("root ::= \"a\"{0}\n", "root").is_err());
        assert!(gbnf_to_lark("root ::= [abc\n", "root").is_err());
        assert!(gbnf_to_lark("root ::= \"abc\n", "root").is_err());
        assert!(gbnf_to_lark("start ::= \"a\"\n", "start").is_err());
        assert!(gbnf_to_lark("no rule here\n", "root").is_err());
    }
}
