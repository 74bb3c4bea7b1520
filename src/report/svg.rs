//! A byte map as SVG: the file drawn as rows of bytes, ranges coloured by class, labels where
//! they fit, a legend with totals, and a listing so that small ranges stay readable.

use std::fmt::Write;

/// One range to draw.
pub struct Span<'a> {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// CSS class of the span.
    pub class: &'a str,
    /// Tooltip label.
    pub label: &'a str,
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 110.0;
const MAP: f64 = WIDTH - LEFT - 20.0;
const ROW_H: f64 = 18.0;
const ROWS: u64 = 40;
const LISTING_MAX: usize = 300;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Render `spans` (sorted, non-overlapping) over `[0, size)`; `palette` maps class to colour.
pub fn byte_map(title: &str, size: u64, spans: &[Span<'_>], palette: &[(&str, &str)]) -> String {
    let per_row = size.div_ceil(ROWS).max(1);
    let rows = size.div_ceil(per_row).max(1);
    let colour = |class: &str| {
        palette
            .iter()
            .find(|p| p.0 == class)
            .map_or("#999999", |p| p.1)
    };
    let listing = spans.len().min(LISTING_MAX);
    let map_top = 50.0;
    let legend_top = map_top + rows as f64 * ROW_H + 20.0;
    let list_top = legend_top + (palette.len() as f64) * 16.0 + 30.0;
    let height = list_top + (listing as f64 + 2.0) * 14.0 + 20.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="22" font-size="15" font-weight="bold">{}</text><text x="10" y="40">{size} bytes, {per_row} bytes per row</text>"#,
        escape(title)
    );
    for r in 0..rows {
        let y = map_top + r as f64 * ROW_H;
        let _ = writeln!(
            s,
            r##"<text x="10" y="{:.1}" fill="#444">0x{:x}</text>"##,
            y + 13.0,
            r * per_row
        );
    }
    for sp in spans {
        let mut a = sp.start;
        while a < sp.end {
            let row = a / per_row;
            let row_end = ((row + 1) * per_row).min(sp.end);
            let x = LEFT + (a - row * per_row) as f64 / per_row as f64 * MAP;
            let w = ((row_end - a) as f64 / per_row as f64 * MAP).max(1.0);
            let y = map_top + row as f64 * ROW_H;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.2}" y="{y:.1}" width="{w:.2}" height="{:.1}" fill="{}"><title>{} [0x{:x}, 0x{:x}) {}</title></rect>"#,
                ROW_H - 2.0,
                colour(sp.class),
                escape(sp.label),
                sp.start,
                sp.end,
                sp.class
            );
            if w >= 6.6 * sp.label.len() as f64 + 6.0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.1}">{}</text>"#,
                    x + 3.0,
                    y + 12.0,
                    escape(sp.label)
                );
            }
            a = row_end;
        }
    }
    for (i, (class, c)) in palette.iter().enumerate() {
        let y = legend_top + i as f64 * 16.0;
        let bytes: u64 = spans
            .iter()
            .filter(|sp| sp.class == *class)
            .map(|sp| sp.end - sp.start)
            .sum();
        let _ = writeln!(
            s,
            r#"<rect x="10" y="{:.1}" width="12" height="12" fill="{c}"/><text x="28" y="{:.1}">{class}: {bytes} bytes</text>"#,
            y,
            y + 10.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="10" y="{list_top:.1}" font-weight="bold" xml:space="preserve">start      end        class             label</text>"#
    );
    for (i, sp) in spans.iter().take(listing).enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="10" y="{:.1}" xml:space="preserve">{:<10} {:<10} {:<17} {}</text>"#,
            list_top + (i as f64 + 1.0) * 14.0,
            format!("0x{:x}", sp.start),
            format!("0x{:x}", sp.end),
            sp.class,
            escape(sp.label)
        );
    }
    if spans.len() > listing {
        let _ = writeln!(
            s,
            r#"<text x="10" y="{:.1}">... {} more ranges</text>"#,
            list_top + (listing as f64 + 1.0) * 14.0,
            spans.len() - listing
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Colours per owner class for ownership byte maps.
const OWNER_PALETTE: [(&str, &str); 5] = [
    ("decoded-record", "#2b83ba"),
    ("alignment", "#fdae61"),
    ("padding", "#d7d7d7"),
    ("preserved-opaque", "#abdda4"),
    ("connection-tail", "#d7191c"),
];

/// Colours per sweep class.
const SWEEP_PALETTE: [(&str, &str); 3] = [
    ("detected", "#1a9641"),
    ("tolerated", "#fdae61"),
    ("undetected", "#d7191c"),
];

/// The colours of a vendor sweep's cells, in `lab::sweep::VENDOR_CELLS` order (worst first).
#[cfg(feature = "onnx")]
const VENDOR_COLOURS: [&str; 6] = [
    "#000000", "#7b3294", "#d7191c", "#fdae61", "#abd9e9", "#1a9641",
];

/// `nbg sweep --vendor --svg`: each swept offset coloured by its worst cell (nbg's and the
/// loader's verdicts together); a sampled offset stands for the `stride` bytes from it.
#[cfg(feature = "onnx")]
pub fn vendor_sweep_map(
    title: &str,
    size: u64,
    report: &crate::simulator::sweep::Report,
) -> String {
    let palette: Vec<(&str, &str)> = crate::lab::sweep::VENDOR_CELLS
        .iter()
        .copied()
        .zip(VENDOR_COLOURS)
        .collect();
    let spans: Vec<Span> = report
        .runs
        .iter()
        .map(|&(start, end, c)| Span {
            start,
            end,
            class: c.as_str(),
            label: c.as_str(),
        })
        .collect();
    byte_map(title, size, &spans, &palette)
}

/// `nbg image --svg`: every owner of the ledger coloured by its class.
pub fn owner_map(title: &str, image: &crate::nbg::image::NbgImage<'_>) -> String {
    let spans: Vec<_> = image
        .owners()
        .iter()
        .map(|o| Span {
            start: o.start,
            end: o.end,
            class: o.class.as_str(),
            label: &o.label,
        })
        .collect();
    byte_map(title, image.len(), &spans, &OWNER_PALETTE)
}

/// `nbg sweep --svg`: runs of offsets with the same outcome class.
pub fn sweep_map(title: &str, size: u64, outcomes: &crate::lab::sweep::Outcomes) -> String {
    let mut runs = Vec::new();
    let mut start = 0usize;
    for i in 1..=outcomes.len() {
        if i == outcomes.len() || outcomes[i].class() != outcomes[start].class() {
            runs.push((start as u64, i as u64, outcomes[start].class().as_str()));
            start = i;
        }
    }
    let spans: Vec<_> = runs
        .iter()
        .map(|&(s, e, c)| Span {
            start: s,
            end: e,
            class: c,
            label: c,
        })
        .collect();
    byte_map(title, size, &spans, &SWEEP_PALETTE)
}
