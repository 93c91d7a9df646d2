//! Plots of a report with `plotters`, each as SVG and PNG: score by arm, score vs
//! bits per weight, tokens per solved task. Labels need a TrueType font: `REIN_FONT`,
//! or a common system font (DejaVu Sans, Liberation Sans, Arial).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::Report;
use crate::EvalError;

const SIZE: (u32, u32) = (900, 520);

/// Font files tried when `REIN_FONT` is not set.
const FONT_CANDIDATES: [&str; 6] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
];

static FONT: OnceLock<Result<(), String>> = OnceLock::new();

/// Registers the label font once per process.
pub(crate) fn register_font() -> Result<(), EvalError> {
    FONT.get_or_init(|| {
        let chosen: Option<PathBuf> = std::env::var_os("REIN_FONT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| FONT_CANDIDATES.iter().map(PathBuf::from).find(|p| p.is_file()));
        let path = chosen.ok_or_else(|| {
            "no TrueType font for plot labels: install fonts-dejavu-core or set REIN_FONT=/path/to/font.ttf".to_string()
        })?;
        let bytes = std::fs::read(&path).map_err(|e| format!("font {}: {e}", path.display()))?;
        // plotters keeps fonts for the life of the process.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| format!("font {} is not a usable TrueType font", path.display()))
    })
    .clone()
    .map_err(EvalError::Plot)
}

/// The charts, by file name.
const CHARTS: [&str; 3] = [
    "score_by_arm",
    "score_vs_bits_per_weight",
    "tokens_per_solved",
];

/// Draws chart `name` on any backend.
fn draw<DB: DrawingBackend>(
    name: &str,
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), String> {
    match name {
        "score_by_arm" => score_by_arm(root, report),
        "score_vs_bits_per_weight" => score_vs_bits(root, report),
        _ => tokens_per_solved(root, report),
    }
}

/// Writes every plot of `report` into `dir` as `NAME.svg` and `NAME.png` (each drawn
/// under a temporary name, then renamed); returns the files written.
pub fn write_plots(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    register_font()?;
    let mut written = Vec::new();
    for name in CHARTS {
        for extension in ["svg", "png"] {
            let path = dir.join(format!("{name}.{extension}"));
            let tmp = dir.join(format!(".{name}.tmp.{extension}"));
            if extension == "svg" {
                render(
                    name,
                    SVGBackend::new(&tmp, SIZE).into_drawing_area(),
                    report,
                )?;
            } else {
                render(
                    name,
                    BitMapBackend::new(&tmp, SIZE).into_drawing_area(),
                    report,
                )?;
            }
            rename(&tmp, &path)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Draws chart `name` on `root` and writes it out.
fn render<DB: DrawingBackend>(
    name: &str,
    root: DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), EvalError> {
    let fail = |e: String| EvalError::Plot(format!("{name}: {e}"));
    draw(name, &root, report).map_err(fail)?;
    root.present().map_err(|e| fail(e.to_string()))
}

fn rename(from: &Path, to: &Path) -> Result<(), EvalError> {
    std::fs::rename(from, to).map_err(|source| EvalError::Io {
        path: to.to_path_buf(),
        source,
    })
}

/// A plotting error as text.
pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The label of a bar chart's category at `x`: the name of bar `i` at `i + 0.5`,
/// nothing between.
pub(crate) fn category_label(names: &[String], x: f64) -> String {
    let index = x.floor() as usize;
    match (x - index as f64 - 0.5).abs() < 0.01 {
        true => names.get(index).cloned().unwrap_or_default(),
        false => String::new(),
    }
}

/// The legend of `chart` (every series with a label) at `position`.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .position(position)
        .draw()
        .map_err(err)
}

/// One bar: its label, its height and an optional min–max whisker.
type Bar = (String, f64, Option<(f64, f64)>);

/// Bars of one value per arm, with optional min–max whiskers.
fn bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    values: &[Bar],
    y_max: f64,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let n = values.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..y_max)
        .map_err(err)?;
    let names: Vec<String> = values.iter().map(|v| v.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| category_label(&names, *x))
        .y_desc(y_label)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(values.iter().enumerate().map(|(i, (_, value, _))| {
            let x = i as f64;
            Rectangle::new([(x + 0.2, 0.0), (x + 0.8, *value)], BLUE.mix(0.6).filled())
        }))
        .map_err(err)?;
    chart
        .draw_series(values.iter().enumerate().filter_map(|(i, (_, _, range))| {
            let (low, high) = (*range)?;
            let x = i as f64 + 0.5;
            Some(PathElement::new(
                vec![(x, low), (x, high)],
                BLACK.stroke_width(2),
            ))
        }))
        .map_err(err)?;
    Ok(())
}

fn score_by_arm<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), String> {
    let values: Vec<Bar> = report
        .arms
        .iter()
        .map(|arm| {
            let stat = arm.metrics.get("solved");
            (
                arm.arm.clone(),
                stat.map_or(0.0, |s| s.mean),
                stat.filter(|s| s.n > 1).map(|s| (s.min, s.max)),
            )
        })
        .collect();
    bars(
        root,
        "Tasks solved by arm (mean, min–max over repetitions)",
        "solved rate",
        &values,
        1.0,
    )
}

fn tokens_per_solved<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), String> {
    let values: Vec<Bar> = report
        .arms
        .iter()
        .map(|arm| (arm.arm.clone(), arm.tokens_per_solved.unwrap_or(0.0), None))
        .collect();
    let top = values.iter().map(|v| v.1).fold(0.0, f64::max).max(1.0) * 1.15;
    bars(
        root,
        "Tokens (prompt + generated) per solved task (0: none solved)",
        "tokens",
        &values,
        top,
    )
}

fn score_vs_bits<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let points: Vec<(f64, f64, String)> = report
        .arms
        .iter()
        .map(|arm| {
            let solved = arm.metrics.get("solved").map_or(0.0, |s| s.mean);
            (arm.bits_per_weight, solved, arm.arm.clone())
        })
        .collect();
    let low = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let high = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (low, high) = if low.is_finite() && high > low {
        (low - 0.5, high + 0.5)
    } else {
        let centre = if low.is_finite() { low } else { 4.0 };
        (centre - 1.0, centre + 1.0)
    };
    let mut chart = ChartBuilder::on(root)
        .caption("Solved rate vs file bits per weight", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(low..high, 0f64..1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bits per weight (file size × 8 / parameters)")
        .y_desc("solved rate")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    let mut sorted = points.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(
            sorted.iter().map(|p| (p.0, p.1)),
            BLUE.mix(0.5),
        ))
        .map_err(err)?;
    chart
        .draw_series(points.iter().map(|(x, y, label)| {
            EmptyElement::at((*x, *y))
                + Circle::new((0, 0), 5, BLUE.filled())
                + Text::new(label.clone(), (8, -16), ("sans-serif", 14))
        }))
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ArmSummary, Stat};
    use std::collections::BTreeMap;

    fn arm(name: &str, solved: f64, bits: f64) -> ArmSummary {
        let mut metrics = BTreeMap::new();
        metrics.insert(
            "solved".to_string(),
            Stat {
                mean: solved,
                std: 0.1,
                min: solved - 0.1,
                max: solved + 0.1,
                n: 3,
            },
        );
        ArmSummary {
            arm: name.into(),
            model: "m".into(),
            model_type: "Q4_K_M".into(),
            bits_per_weight: bits,
            profile: "full".into(),
            kv: "f16".into(),
            runs: 3,
            solved_runs: 2,
            metrics,
            per_suite: BTreeMap::new(),
            per_tag: BTreeMap::new(),
            tokens_per_solved: Some(1234.0),
            stop_reasons: BTreeMap::new(),
            errors_by_class: BTreeMap::new(),
            rules: BTreeMap::new(),
        }
    }

    #[test]
    fn every_plot_is_written_as_svg_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let report = Report {
            rein_version: "0".into(),
            suites: vec!["traps".into()],
            tasks: 1,
            reps: 3,
            models: BTreeMap::new(),
            arms: vec![arm("quant=source", 0.6, 5.1), arm("quant=q2_k", 0.3, 3.4)],
        };
        let written = write_plots(&report, dir.path()).unwrap();
        assert_eq!(written.len(), 6);
        for path in written {
            let bytes = std::fs::read(&path).unwrap();
            match path.extension().and_then(|e| e.to_str()) {
                Some("png") => assert_eq!(&bytes[..4], b"\x89PNG"),
                _ => {
                    let text = String::from_utf8(bytes).unwrap();
                    assert!(
                        text.contains("<svg") && text.contains("quant=q2_k"),
                        "{}",
                        path.display()
                    );
                }
            }
        }
    }
}
