//! Numeric bounds, kept when the grammar can use them and recorded when not.

use super::*;

impl Walker<'_> {
    pub(super) fn bounds(&mut self, map: &mut Map<String, Value>, path: &str) -> NumberBounds {
        let mut take = |key: &str| -> Option<Value> { map.remove(key) };
        let (minimum, maximum) = (take("minimum"), take("maximum"));
        let (ex_min, ex_max) = (take("exclusiveMinimum"), take("exclusiveMaximum"));
        let num = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64);
        let mut b = NumberBounds {
            minimum: num(&minimum),
            maximum: num(&maximum),
            exclusive_minimum: num(&ex_min),
            exclusive_maximum: num(&ex_max),
        };
        // Draft 4: exclusiveMinimum: true makes `minimum` exclusive.
        if ex_min == Some(Value::Bool(true)) {
            b.exclusive_minimum = b.minimum.take();
        }
        if ex_max == Some(Value::Bool(true)) {
            b.exclusive_maximum = b.maximum.take();
        }
        for (key, v) in [("minimum", &minimum), ("maximum", &maximum)] {
            if matches!(v, Some(v) if !v.is_number()) {
                self.report.add(
                    path,
                    ChangeKind::KeywordDropped,
                    format!("{key} is not a number"),
                );
            }
        }
        b
    }

    /// A lower and an upper length/count bound (`keys`); a lower bound above the upper
    /// one would make a grammar no text matches (and llama.cpp's parser allocates
    /// without limit on `{min,max}` with min > max), so both are removed and reported.
    pub(super) fn bound_pair(
        &mut self,
        map: &mut Map<String, Value>,
        (min_key, max_key): (&str, &str),
        cap: u64,
        path: &str,
    ) -> (Option<u64>, Option<u64>) {
        let min = self.bound(map, min_key, cap, path);
        let max = self.bound(map, max_key, cap, path);
        match (min, max) {
            (Some(lo), Some(hi)) if lo > hi => {
                self.report.add(
                    path,
                    ChangeKind::BoundsContradict,
                    format!("{min_key} {lo} is above {max_key} {hi}: no value satisfies both; both removed from the grammar (validation refuses every value)"),
                );
                (None, None)
            }
            pair => pair,
        }
    }

    /// A length/count bound; bounds above `cap` are removed and reported.
    pub(super) fn bound(
        &mut self,
        map: &mut Map<String, Value>,
        key: &str,
        cap: u64,
        path: &str,
    ) -> Option<u64> {
        let value = map.remove(key)?;
        match value
            .as_u64()
            .or_else(|| value.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        {
            Some(n) if n <= cap => Some(n),
            Some(n) => {
                self.report.add(path, ChangeKind::BoundCapped, format!("{key} {n} is above the grammar limit {cap}: removed from the grammar (validation enforces it)"));
                None
            }
            None => {
                self.report.add(
                    path,
                    ChangeKind::KeywordDropped,
                    format!("{key} {value} is not a count"),
                );
                None
            }
        }
    }
}
