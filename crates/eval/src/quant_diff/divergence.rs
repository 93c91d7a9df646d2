//! How far one model's next-token distribution is from another's at the same
//! position: the KL divergence KL(reference ‖ other) in nats and whether both put the
//! same token first, computed with `candle-core` tensors over the raw logits.

use candle_core::{Device, Tensor, D};

/// One position compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Divergence {
    /// KL(reference ‖ other), in nats (0 for identical distributions).
    pub kl: f64,
    /// The reference's most likely token.
    pub top_reference: u32,
    /// The other model's most likely token.
    pub top_other: u32,
}

impl Divergence {
    /// Both models put the same token first.
    pub fn agrees(&self) -> bool {
        self.top_reference == self.top_other
    }
}

/// Compares each row of `reference` with the same row of `other` (logits over one
/// vocabulary; every row the same length).
pub fn compare(reference: &[Vec<f32>], other: &[Vec<f32>]) -> Result<Vec<Divergence>, String> {
    if reference.len() != other.len() {
        return Err(format!(
            "{} reference rows against {} others",
            reference.len(),
            other.len()
        ));
    }
    if reference.is_empty() {
        return Ok(Vec::new());
    }
    let width = reference[0].len();
    if width == 0 || reference.iter().chain(other).any(|row| row.len() != width) {
        return Err("logit rows of different or zero lengths".into());
    }
    // In f64: a sum over a vocabulary of 150k entries, and no overflow to ±inf.
    let tensor = |rows: &[Vec<f32>]| {
        let flat: Vec<f64> = rows.iter().flatten().map(|&v| f64::from(v)).collect();
        Tensor::from_vec(flat, (rows.len(), width), &Device::Cpu)
    };
    let run = || -> candle_core::Result<Vec<Divergence>> {
        let (p, q) = (tensor(reference)?, tensor(other)?);
        let (log_p, log_q) = (log_softmax(&p)?, log_softmax(&q)?);
        let kl = (log_p.exp()? * (&log_p - &log_q)?)?
            .sum(D::Minus1)?
            .to_vec1::<f64>()?;
        let top_p = p.argmax(D::Minus1)?.to_vec1::<u32>()?;
        let top_q = q.argmax(D::Minus1)?.to_vec1::<u32>()?;
        Ok(kl
            .into_iter()
            .zip(top_p.into_iter().zip(top_q))
            .map(|(kl, (top_reference, top_other))| Divergence {
                kl,
                top_reference,
                top_other,
            })
            .collect())
    };
    let found = run().map_err(|e| e.to_string())?;
    match found.iter().any(|d| !d.kl.is_finite()) {
        true => Err("logits that are not finite numbers".into()),
        false => Ok(found),
    }
}

/// Log-probabilities of each row of logits, shifted by the row's largest value so no
/// `exp` overflows.
fn log_softmax(logits: &Tensor) -> candle_core::Result<Tensor> {
    let shifted = logits.broadcast_sub(&logits.max_keepdim(D::Minus1)?)?;
    let log_sum = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?;
    shifted.broadcast_sub(&log_sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_distribution_against_itself_diverges_by_nothing() {
        let rows = vec![vec![1.0, 2.0, 3.0, -4.0], vec![0.5, 0.5, 9.0, 0.0]];
        let found = compare(&rows, &rows).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|d| d.kl == 0.0 && d.agrees()), "{found:?}");
        assert_eq!(found[0].top_reference, 2);
    }

    #[test]
    fn the_divergence_matches_its_definition() {
        let p = [2.0f32, 1.0, 0.0];
        let q = [0.0f32, 1.0, 2.0];
        let softmax = |x: &[f32]| {
            let sum: f64 = x.iter().map(|v| (*v as f64).exp()).sum();
            x.iter()
                .map(|v| (*v as f64).exp() / sum)
                .collect::<Vec<f64>>()
        };
        let (sp, sq) = (softmax(&p), softmax(&q));
        let expected: f64 = sp.iter().zip(&sq).map(|(a, b)| a * (a / b).ln()).sum();
        let found = compare(&[p.to_vec()], &[q.to_vec()]).unwrap()[0];
        assert!(
            (found.kl - expected).abs() < 1e-5,
            "{} vs {expected}",
            found.kl
        );
        assert!(!found.agrees());
        // Logits shifted by a constant are the same distribution.
        let shifted: Vec<f32> = p.iter().map(|v| v + 1000.0).collect();
        assert!(compare(&[p.to_vec()], &[shifted]).unwrap()[0].kl.abs() < 1e-5);
    }

    #[test]
    fn rows_that_do_not_match_and_numbers_that_are_not_are_refused() {
        assert!(compare(&[vec![1.0]], &[]).is_err());
        assert!(compare(&[vec![1.0, 2.0]], &[vec![1.0]]).is_err());
        assert!(compare(&[vec![1.0, f32::NAN]], &[vec![1.0, 2.0]]).is_err());
    }
}
