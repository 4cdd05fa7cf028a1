//! `heddle validate GRAPH.json`: every problem, one per line.

use std::io::Write;
use std::path::Path;

use heddle_engine::{GraphDocument, Registry};

use super::{CliError, Outcome};

/// Reads a graph file into a document.
pub(crate) fn read_document(path: &Path) -> Result<GraphDocument, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    GraphDocument::from_json(&text).map_err(|source| CliError::Format {
        path: path.to_path_buf(),
        source,
    })
}

/// Prints every problem of the graph at `path`: an error if any is an
/// error, warnings (with a zero exit) otherwise.
pub fn validate(
    path: &Path,
    registry: &Registry,
    out: &mut dyn Write,
) -> Result<Outcome, CliError> {
    let document = read_document(path)?;
    let report = heddle_engine::validate(&document, registry);
    if report.has_errors() {
        return Err(CliError::Invalid {
            path: path.to_path_buf(),
            report,
        });
    }
    for warning in report.warnings() {
        writeln!(out, "{warning}")?;
    }
    writeln!(
        out,
        "{}: valid ({} nodes, {} edges, {} warnings)",
        path.display(),
        document.nodes.len(),
        document.edges.len(),
        report.warnings().count()
    )?;
    Ok(Outcome::Done)
}
