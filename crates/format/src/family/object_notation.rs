//! Gemma 4's object notation: `{key:value,...}` with bare keys, strings quoted by
//! `<|"|>`, arrays, numbers, `true`, `false` and `null`. Read into JSON values and
//! written from them.

use serde_json::{Map, Number, Value};

/// Quotes a string.
pub const QUOTE: &str = "<|\"|>";

/// Why a value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnError {
    /// The text ended inside the value.
    Eof,
    /// The text is not object notation there.
    Syntax(String),
}

/// Reads the value at the start of `text`; returns it and the bytes it took.
pub(crate) fn read(text: &str) -> Result<(Value, usize), OnError> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value()?;
    Ok((value, reader.at))
}

/// Writes `value` in object notation.
pub(crate) fn write(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{QUOTE}{s}{QUOTE}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(write).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k}:{}", write(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn eof_or(&self, what: &str) -> OnError {
        if self.rest().is_empty() || QUOTE.starts_with(self.rest()) {
            OnError::Eof
        } else {
            OnError::Syntax(format!(
                "expected {what} at `{}`",
                self.rest().chars().take(12).collect::<String>()
            ))
        }
    }

    fn value(&mut self) -> Result<Value, OnError> {
        self.skip_ws();
        if self.eat(QUOTE) {
            let end = self.rest().find(QUOTE).ok_or(OnError::Eof)?;
            let s = self.rest()[..end].to_string();
            self.at += end + QUOTE.len();
            return Ok(Value::String(s));
        }
        if self.eat("{") {
            return self.object();
        }
        if self.eat("[") {
            return self.array();
        }
        for (word, value) in [
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("null", Value::Null),
        ] {
            if self.eat(word) {
                return Ok(value);
            }
            if !self.rest().is_empty() && word.starts_with(self.rest()) {
                return Err(OnError::Eof);
            }
        }
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.eof_or("a value"));
        }
        if len == self.rest().len() {
            return Err(OnError::Eof);
        }
        let number: Number = serde_json::from_str(&self.rest()[..len])
            .map_err(|e| OnError::Syntax(format!("bad number: {e}")))?;
        self.at += len;
        Ok(Value::Number(number))
    }

    fn object(&mut self) -> Result<Value, OnError> {
        let mut map = Map::new();
        self.skip_ws();
        if self.eat("}") {
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            let end = self
                .rest()
                .find([':', '{', '}', '[', ']', ','])
                .ok_or(OnError::Eof)?;
            if !self.rest()[end..].starts_with(':') || end == 0 {
                return Err(OnError::Syntax("expected `key:`".into()));
            }
            let key = self.rest()[..end].trim().to_string();
            self.at += end + 1;
            let value = self.value()?;
            map.insert(key, value);
            self.skip_ws();
            if self.eat("}") {
                return Ok(Value::Object(map));
            }
            if !self.eat(",") {
                return Err(self.eof_or("`,` or `}`"));
            }
        }
    }

    fn array(&mut self) -> Result<Value, OnError> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("]") {
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            if self.eat("]") {
                return Ok(Value::Array(items));
            }
            if !self.eat(",") {
                return Err(self.eof_or("`,` or `]`"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_writes_object_notation() {
        let text = "{a:<|\"|>x,y} \"q\"<|\"|>, key with space:1.5e-05,l:[1,true,null,{b:-2}]}rest";
        let (value, used) = read(text).unwrap();
        assert_eq!(&text[used..], "rest");
        assert_eq!(
            value,
            json!({"a": "x,y} \"q\"", "key with space": 1.5e-05, "l": [1, true, null, {"b": -2}]})
        );
        assert_eq!(read(&write(&value)).unwrap().0, value);
        assert_eq!(read("{a:<|\"|>Par"), Err(OnError::Eof));
        assert_eq!(read("{a:1"), Err(OnError::Eof));
        assert!(matches!(read("{a 1}"), Err(OnError::Syntax(_))));
    }
}
