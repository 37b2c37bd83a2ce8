//! Tables for human output: columns that fit the terminal (long cells
//! wrap; a pipe gets them whole, for `grep` and `cut`), a bold header only
//! on a terminal and never with `NO_COLOR` set (no-color.org). JSON output
//! never comes here.

use std::io::IsTerminal;

use comfy_table::presets::NOTHING;
use comfy_table::{Attribute, Cell, ContentArrangement, Table};

/// Whether output may be styled: stdout is a terminal and `NO_COLOR` is
/// unset or empty.
pub(crate) fn styled() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A table with these column headers, as wide as the terminal allows.
pub(crate) fn new(headers: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if !std::io::stdout().is_terminal() {
        table.force_no_tty();
    }
    let style = styled();
    table.set_header(headers.iter().map(|h| {
        let cell = Cell::new(h);
        if style {
            cell.add_attribute(Attribute::Bold)
        } else {
            cell
        }
    }));
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    if !style {
        table.force_no_tty();
    }
    table
}

/// The table's text, each line without trailing spaces, ending in a newline.
pub(crate) fn render(table: &Table) -> String {
    let mut out = String::new();
    for line in table.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
