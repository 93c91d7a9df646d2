//! The quantization report's plots, as SVG, one message each: the solved rate against
//! bits per weight with its intervals; how often each arm's first choice at a decision
//! token differs from the source's; generation speed against solved rate with the
//! Pareto front labelled. Every value is written on the plot.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::QuantArm;
use crate::plot::{category_label, err, legend};
use crate::quant_diff::{DecisionKind, QuantDiff};
use crate::EvalError;

const SIZE: (u32, u32) = (960, 540);

/// The plots: file name and what each shows (its alt text).
pub const PLOTS: [(&str, &str); 3] = [
    (
        "score_vs_bits",
        "Solved rate against bits per weight, with 95% Wilson intervals",
    ),
    (
        "decision_disagreement",
        "How often each arm's first choice differs from the source's, per decision kind",
    ),
    (
        "speed_vs_score",
        "Generated tokens per second against solved rate, Pareto front labelled",
    ),
];

/// The plots there is data for.
pub fn available(arms: &[QuantArm], diffs: &[QuantDiff]) -> Vec<(&'static str, &'static str)> {
    PLOTS
        .into_iter()
        .filter(|(name, _)| match *name {
            "decision_disagreement" => !diffs.is_empty(),
            "speed_vs_score" => arms.iter().any(|a| a.speed.is_some()),
            _ => true,
        })
        .collect()
}

/// Writes each available plot as `NAME.svg` into `dir` (drawn under a temporary
/// name, then renamed).
pub fn write(
    arms: &[QuantArm],
    diffs: &[QuantDiff],
    dir: &Path,
) -> Result<Vec<PathBuf>, EvalError> {
    crate::plot::register_font()?;
    let mut written = Vec::new();
    for (name, _) in available(arms, diffs) {
        let path = dir.join(format!("{name}.svg"));
        let tmp = dir.join(format!(".{name}.tmp.svg"));
        {
            let root = SVGBackend::new(&tmp, SIZE).into_drawing_area();
            let fail = |e: String| EvalError::Plot(format!("{name}: {e}"));
            match name {
                "score_vs_bits" => score_vs_bits(&root, arms),
                "decision_disagreement" => disagreement(&root, arms, diffs),
                _ => speed_vs_score(&root, arms),
            }
            .map_err(fail)?;
            root.present().map_err(|e| fail(e.to_string()))?;
        }
        std::fs::rename(&tmp, &path).map_err(|source| EvalError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// The short name of an arm on a plot (`quant=q3_k_m` → `q3_k_m`).
fn short(arm: &str) -> &str {
    arm.split_once('=').map_or(arm, |(_, value)| value)
}

fn score_vs_bits<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    arms: &[QuantArm],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let low = arms
        .iter()
        .map(|a| a.bits_per_weight)
        .fold(f64::INFINITY, f64::min);
    let high = arms.iter().map(|a| a.bits_per_weight).fold(0.0, f64::max);
    let (low, high) = match low.is_finite() && high > low {
        true => (low - 0.6, high + 0.6),
        false => (high - 1.0, high + 1.0),
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Solved rate against bits per weight (95% Wilson intervals)",
            ("sans-serif", 24),
        )
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(low..high, 0f64..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bits per weight (file size × 8 / parameters)")
        .y_desc("tasks solved")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(arms.iter().map(|a| {
            PathElement::new(
                vec![
                    (a.bits_per_weight, a.interval[0]),
                    (a.bits_per_weight, a.interval[1]),
                ],
                BLACK.stroke_width(2),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(arms.iter().map(|a| {
            EmptyElement::at((a.bits_per_weight, a.rate()))
                + Circle::new((0, 0), 6, BLUE.filled())
                + Text::new(
                    format!("{} {:.2}", short(&a.arm), a.rate()),
                    (9, -8),
                    ("sans-serif", 16),
                )
        }))
        .map_err(err)?;
    Ok(())
}

const KIND_COLOURS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

/// What a comparison is called on a plot: its arm's short name, else its file type
/// and KV cache type.
fn diff_label(arms: &[QuantArm], diff: &QuantDiff) -> String {
    match arms.iter().find(|a| a.divergence.as_ref() == Some(diff)) {
        Some(arm) => short(&arm.arm).to_string(),
        None if diff.other_kv.is_empty() || diff.other_kv == "f16" => diff.other_type.clone(),
        None => format!("{} KV {}", diff.other_type, diff.other_kv),
    }
}

fn disagreement<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    arms: &[QuantArm],
    diffs: &[QuantDiff],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    // (comparison index, kind index, share of decisions where the first choice differs).
    let mut bars = Vec::new();
    for (i, diff) in diffs.iter().enumerate() {
        for (k, kind) in DecisionKind::ALL.iter().enumerate() {
            if let Some(found) = diff.kinds.iter().find(|s| s.kind == kind.as_str()) {
                bars.push((i, k, 1.0 - found.top1_agreement));
            }
        }
    }
    let top = bars.iter().map(|b| b.2).fold(0.0, f64::max);
    let y_max = (top * 1.25).clamp(0.05, 1.0);
    let n = diffs.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Decisions where the arm's first choice differs from the source's",
            ("sans-serif", 24),
        )
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..y_max)
        .map_err(err)?;
    let names: Vec<String> = diffs.iter().map(|d| diff_label(arms, d)).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| category_label(&names, *x))
        .y_desc("share of decision tokens")
        .y_label_formatter(&|y| format!("{:.0}%", y * 100.0))
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    let width = 0.8 / DecisionKind::ALL.len() as f64;
    for (k, kind) in DecisionKind::ALL.iter().enumerate() {
        let colour = KIND_COLOURS[k];
        chart
            .draw_series(bars.iter().filter(|b| b.1 == k).map(|&(i, _, value)| {
                let x = i as f64 + 0.1 + k as f64 * width;
                Rectangle::new([(x, 0.0), (x + width * 0.9, value)], colour.filled())
            }))
            .map_err(err)?
            .label(kind.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], colour.filled()));
        chart
            .draw_series(bars.iter().filter(|b| b.1 == k).map(|&(i, _, value)| {
                let x = i as f64 + 0.1 + k as f64 * width;
                Text::new(
                    format!("{:.0}%", value * 100.0),
                    (x, value + y_max * 0.01),
                    ("sans-serif", 14),
                )
            }))
            .map_err(err)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// The arms no other arm beats on both speed and solved rate, fastest first.
fn pareto(points: &[(f64, f64, String)]) -> Vec<(f64, f64, String)> {
    let mut front: Vec<(f64, f64, String)> = points
        .iter()
        .filter(|(x, y, _)| {
            !points
                .iter()
                .any(|(ox, oy, _)| ox >= x && oy >= y && (ox > x || oy > y))
        })
        .cloned()
        .collect();
    front.sort_by(|a, b| b.0.total_cmp(&a.0));
    front
}

fn speed_vs_score<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    arms: &[QuantArm],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let points: Vec<(f64, f64, String)> = arms
        .iter()
        .filter_map(|a| {
            let speed = a.speed.as_ref()?;
            Some((
                speed.generated_tokens_per_s,
                a.rate(),
                short(&a.arm).to_string(),
            ))
        })
        .collect();
    let high = points.iter().map(|p| p.0).fold(0.0, f64::max) * 1.2 + 1.0;
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Generation speed against solved rate (Pareto front in red)",
            ("sans-serif", 24),
        )
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..high, 0f64..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("generated tokens per second on this machine")
        .y_desc("tasks solved")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    let front = pareto(&points);
    chart
        .draw_series(LineSeries::new(
            front.iter().map(|p| (p.0, p.1)),
            RED.stroke_width(2),
        ))
        .map_err(err)?
        .label("Pareto front: nothing is both faster and better")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RED.stroke_width(2)));
    chart
        .draw_series(points.iter().map(|(x, y, label)| {
            let on_front = front.iter().any(|f| &f.2 == label);
            EmptyElement::at((*x, *y))
                + Circle::new(
                    (0, 0),
                    6,
                    if on_front {
                        RED.filled()
                    } else {
                        BLUE.filled()
                    },
                )
                + Text::new(
                    format!("{label} ({x:.1} t/s, {y:.2})"),
                    (9, -8),
                    ("sans-serif", 15),
                )
        }))
        .map_err(err)?;
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pareto_front_keeps_only_arms_nothing_beats_on_both() {
        let points = vec![
            (10.0, 0.3, "a".to_string()),
            (12.0, 0.2, "b".to_string()),
            (8.0, 0.25, "c".to_string()),
            (12.0, 0.3, "d".to_string()),
        ];
        let names: Vec<String> = pareto(&points).into_iter().map(|p| p.2).collect();
        assert_eq!(names, ["d"]);
        let points = vec![(10.0, 0.3, "a".to_string()), (12.0, 0.2, "b".to_string())];
        let names: Vec<String> = pareto(&points).into_iter().map(|p| p.2).collect();
        assert_eq!(names, ["b", "a"]);
    }
}
