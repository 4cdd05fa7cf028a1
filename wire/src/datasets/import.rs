//! Reading examples from a file people already have: JSON lines (the
//! format `heddle eval` reads) or a CSV table with a column mapping. The
//! browser's import dialog and the `heddle` command read with this one
//! code, and check each example against the same bounds the server keeps,
//! so a file is refused before it is sent, with the line (and column) of
//! every problem.

use std::fmt;

use heddle_engine::format::ChannelType;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ExampleInput, MAX_EXAMPLES};

/// The largest file read (bytes).
pub const MAX_FILE_BYTES: usize = 32 * 1024 * 1024;
/// The most columns a CSV table may have.
pub const MAX_COLUMNS: usize = 200;
/// The most problems reported for one file: enough to see the pattern.
pub const MAX_PROBLEMS: usize = 20;

/// What is wrong with a file, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportProblem {
    /// The line of the file, from 1 (0: the file as a whole).
    pub line: usize,
    /// The column, for a CSV table.
    pub column: Option<String>,
    pub message: String,
}

impl ImportProblem {
    fn at(line: usize, message: impl Into<String>) -> ImportProblem {
        ImportProblem {
            line,
            column: None,
            message: message.into(),
        }
    }

    fn in_column(line: usize, column: &str, message: impl Into<String>) -> ImportProblem {
        ImportProblem {
            line,
            column: Some(column.to_string()),
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, &self.column) {
            (0, _) => write!(f, "{}", self.message),
            (line, Some(column)) => write!(f, "line {line}, column `{column}`: {}", self.message),
            (line, None) => write!(f, "line {line}: {}", self.message),
        }
    }
}

/// How a file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// One JSON object per line: `{"input": {...}, "reference": ..., "label": "..."}`.
    JsonLines,
    /// A table with a header row.
    Csv,
}

impl FileFormat {
    /// By the file's name, else by its first character (`{` starts a JSON
    /// line).
    pub fn of(name: &str, text: &str) -> FileFormat {
        let name = name.to_ascii_lowercase();
        if name.ends_with(".csv") || name.ends_with(".tsv") {
            return FileFormat::Csv;
        }
        if name.ends_with(".jsonl") || name.ends_with(".ndjson") || name.ends_with(".json") {
            return FileFormat::JsonLines;
        }
        match text.trim_start().chars().next() {
            Some('{') => FileFormat::JsonLines,
            _ => FileFormat::Csv,
        }
    }
}

/// One line of a JSON lines file. `id` is the label's other name (what
/// `heddle eval`'s files called it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    input: Map<String, Value>,
    #[serde(default)]
    reference: Option<Value>,
    #[serde(default, alias = "id")]
    label: Option<String>,
}

/// Reads a JSON lines file: every example, or every problem (up to
/// [`MAX_PROBLEMS`]) with its line.
pub fn read_json_lines(text: &str) -> Result<Vec<ExampleInput>, Vec<ImportProblem>> {
    let mut examples = Vec::new();
    let mut problems = Vec::new();
    if text.len() > MAX_FILE_BYTES {
        return Err(vec![too_big()]);
    }
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        if examples.len() + problems.len() == MAX_EXAMPLES {
            problems.push(ImportProblem::at(
                number,
                format!("more than {MAX_EXAMPLES} examples"),
            ));
            break;
        }
        let mut reader = serde_json::Deserializer::from_str(line);
        let parsed = serde_path_to_error::deserialize::<_, Line>(&mut reader)
            .map_err(|error| {
                let at = error.path().to_string();
                let message = error.into_inner().to_string();
                if at == "." {
                    message
                } else {
                    format!("at {at}: {message}")
                }
            })
            .and_then(|line| {
                let example = ExampleInput {
                    input: line.input,
                    reference: line.reference,
                    label: line.label,
                };
                check(&example).map(|()| example)
            });
        match parsed {
            Ok(example) => examples.push(example),
            Err(message) => {
                problems.push(ImportProblem::at(number, message));
                if problems.len() == MAX_PROBLEMS {
                    break;
                }
            }
        }
    }
    finish(examples, problems)
}

/// A CSV table as read: its header and its rows, each with the line it
/// starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<(usize, Vec<String>)>,
}

/// Reads a CSV (or, for a `.tsv` name or a tab-separated header, TSV)
/// table with a header row.
pub fn read_table(name: &str, text: &str) -> Result<Table, ImportProblem> {
    if text.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let first_line = text.lines().next().unwrap_or_default();
    let tabs = name.to_ascii_lowercase().ends_with(".tsv")
        || first_line.matches('\t').count() > first_line.matches(',').count();
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(if tabs { b'\t' } else { b',' })
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|error| ImportProblem::at(1, csv_message(&error)))?
        .iter()
        .map(|header| header.trim().to_string())
        .collect();
    if headers.iter().all(String::is_empty) {
        return Err(ImportProblem::at(1, "the first line must name the columns"));
    }
    if headers.len() > MAX_COLUMNS {
        return Err(ImportProblem::at(
            1,
            format!("more than {MAX_COLUMNS} columns"),
        ));
    }
    for (index, header) in headers.iter().enumerate() {
        if headers[..index].contains(header) {
            return Err(ImportProblem::at(
                1,
                format!("two columns are named `{header}`"),
            ));
        }
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|error| {
            let line = error
                .position()
                .map_or(0, |position| position.line() as usize);
            ImportProblem::at(line, csv_message(&error))
        })?;
        let line = record
            .position()
            .map_or(0, |position| position.line() as usize);
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        if rows.len() == MAX_EXAMPLES {
            return Err(ImportProblem::at(
                line,
                format!("more than {MAX_EXAMPLES} examples"),
            ));
        }
        rows.push((line, record.iter().map(str::to_string).collect()));
    }
    if rows.is_empty() {
        return Err(ImportProblem::at(
            0,
            "the table has no rows under its header",
        ));
    }
    Ok(Table { headers, rows })
}

fn csv_message(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} cells where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => error.to_string(),
    }
}

/// An input channel of the graph, which a column can fill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputChannel {
    pub name: String,
    pub ty: ChannelType,
}

/// What a column of a table becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnUse {
    /// Nothing.
    Skip,
    /// The example's label.
    Label,
    /// The value of this input channel.
    Input(String),
    /// A field of the reference (the reference is an object of them).
    Reference(String),
}

/// A first mapping for a table: a column named like an input channel
/// fills it; `label`, `id` or `name` is the label; with one input channel
/// left, the first other column fills it; the rest are reference fields
/// named as their columns (`expected`, `output` and `reference` are read
/// as `answer`, the field a run's answer is kept under).
pub fn guess_mapping(headers: &[String], channels: &[InputChannel]) -> Vec<ColumnUse> {
    let named = |header: &str| {
        channels
            .iter()
            .find(|channel| channel.name.eq_ignore_ascii_case(header))
    };
    let mut uses: Vec<ColumnUse> = headers
        .iter()
        .map(|header| match named(header) {
            Some(channel) => ColumnUse::Input(channel.name.clone()),
            None if ["label", "id", "name"]
                .iter()
                .any(|word| header.eq_ignore_ascii_case(word)) =>
            {
                ColumnUse::Label
            }
            None => ColumnUse::Skip,
        })
        .collect();
    let filled: Vec<&str> = uses
        .iter()
        .filter_map(|used| match used {
            ColumnUse::Input(channel) => Some(channel.as_str()),
            _ => None,
        })
        .collect();
    let unfilled: Vec<&InputChannel> = channels
        .iter()
        .filter(|channel| !filled.contains(&channel.name.as_str()))
        .collect();
    let mut free = unfilled.into_iter();
    let mut one_left = (channels.len() - filled.len() == 1)
        .then(|| free.next())
        .flatten();
    for (header, used) in headers.iter().zip(uses.iter_mut()) {
        if *used != ColumnUse::Skip || header.is_empty() {
            continue;
        }
        *used = match one_left.take() {
            Some(channel) => ColumnUse::Input(channel.name.clone()),
            None => {
                let field = if ["expected", "output", "reference"]
                    .iter()
                    .any(|word| header.eq_ignore_ascii_case(word))
                {
                    "answer".to_string()
                } else {
                    header.clone()
                };
                ColumnUse::Reference(field)
            }
        };
    }
    uses
}

/// Makes the table's rows into examples as `mapping` says (one use per
/// column): every example, or every problem (up to [`MAX_PROBLEMS`]) with
/// its line and column.
pub fn examples_from_table(
    table: &Table,
    mapping: &[ColumnUse],
    channels: &[InputChannel],
) -> Result<Vec<ExampleInput>, Vec<ImportProblem>> {
    if !mapping
        .iter()
        .any(|used| matches!(used, ColumnUse::Input(_)))
    {
        return Err(vec![ImportProblem::at(
            0,
            "no column fills an input: choose which column is the run's input",
        )]);
    }
    for (index, used) in mapping.iter().enumerate() {
        let taken_before = mapping[..index].contains(used);
        if taken_before && *used != ColumnUse::Skip {
            let column = table.headers.get(index).map_or("", String::as_str);
            let what = match used {
                ColumnUse::Label => "the label".to_string(),
                ColumnUse::Input(channel) => format!("input `{channel}`"),
                ColumnUse::Reference(field) => format!("reference field `{field}`"),
                ColumnUse::Skip => String::new(),
            };
            return Err(vec![ImportProblem::in_column(
                1,
                column,
                format!("{what} is filled by an earlier column too"),
            )]);
        }
    }
    let mut examples = Vec::new();
    let mut problems = Vec::new();
    for (line, cells) in &table.rows {
        match example_of_row(*line, &table.headers, cells, mapping, channels) {
            Ok(example) => examples.push(example),
            Err(problem) => {
                problems.push(problem);
                if problems.len() == MAX_PROBLEMS {
                    break;
                }
            }
        }
    }
    finish(examples, problems)
}

fn example_of_row(
    line: usize,
    headers: &[String],
    cells: &[String],
    mapping: &[ColumnUse],
    channels: &[InputChannel],
) -> Result<ExampleInput, ImportProblem> {
    let mut input = Map::new();
    let mut reference = Map::new();
    let mut label = None;
    for ((header, cell), used) in headers.iter().zip(cells).zip(mapping) {
        let text = cell.trim();
        if text.is_empty() {
            continue;
        }
        match used {
            ColumnUse::Skip => {}
            ColumnUse::Label => label = Some(text.to_string()),
            ColumnUse::Input(channel) => {
                let ty = channels
                    .iter()
                    .find(|known| known.name == *channel)
                    .map_or(ChannelType::Any, |known| known.ty);
                let value = cell_value(text, ty)
                    .map_err(|message| ImportProblem::in_column(line, header, message))?;
                input.insert(channel.clone(), value);
            }
            ColumnUse::Reference(field) => {
                reference.insert(
                    field.clone(),
                    cell_value(text, ChannelType::Any)
                        .unwrap_or_else(|_| Value::String(text.into())),
                );
            }
        }
    }
    if input.is_empty() {
        return Err(ImportProblem::at(
            line,
            "no input: the input columns are empty",
        ));
    }
    let example = ExampleInput {
        input,
        reference: (!reference.is_empty()).then_some(Value::Object(reference)),
        label,
    };
    check(&example).map_err(|message| ImportProblem::at(line, message))?;
    Ok(example)
}

/// A cell's text as a value of the channel's type. A chat transcript is
/// one user message of the text (or the messages, written as JSON); `any`
/// reads JSON objects and lists and keeps other text as text.
fn cell_value(text: &str, ty: ChannelType) -> Result<Value, String> {
    let json = || serde_json::from_str::<Value>(text).map_err(|error| format!("not JSON: {error}"));
    match ty {
        ChannelType::String => Ok(Value::String(text.to_string())),
        ChannelType::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not a whole number")),
        ChannelType::Number => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{text}` is not a number")),
        ChannelType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("`{text}` is not true or false")),
        },
        ChannelType::List => match json()? {
            list @ Value::Array(_) => Ok(list),
            _ => Err("not a JSON list".into()),
        },
        ChannelType::Object => match json()? {
            object @ Value::Object(_) => Ok(object),
            _ => Err("not a JSON object".into()),
        },
        ChannelType::Messages if text.starts_with('[') => match json()? {
            list @ Value::Array(_) => Ok(list),
            _ => Err("not a JSON list of messages".into()),
        },
        ChannelType::Messages => Ok(serde_json::json!([{"role": "user", "content": text}])),
        ChannelType::Any if text.starts_with(['{', '[']) => json(),
        ChannelType::Any => Ok(Value::String(text.to_string())),
    }
}

/// The server's bounds on one example, checked here first.
fn check(example: &ExampleInput) -> Result<(), String> {
    let input = Value::Object(example.input.clone());
    match super::example_problem(example.label.as_deref(), &input, example.reference.as_ref()) {
        Some((part, message)) => Err(format!("the {part}: {message}")),
        None => Ok(()),
    }
}

fn finish(
    examples: Vec<ExampleInput>,
    problems: Vec<ImportProblem>,
) -> Result<Vec<ExampleInput>, Vec<ImportProblem>> {
    if !problems.is_empty() {
        return Err(problems);
    }
    if examples.is_empty() {
        return Err(vec![ImportProblem::at(0, "the file holds no examples")]);
    }
    Ok(examples)
}

fn too_big() -> ImportProblem {
    ImportProblem::at(
        0,
        format!(
            "the file is larger than {} MiB; split it",
            MAX_FILE_BYTES / (1024 * 1024)
        ),
    )
}

/// Splits examples into requests the server takes: at most
/// [`super::MAX_EXAMPLES_PER_REQUEST`] examples and about `max_bytes` of
/// JSON each.
pub fn batches(examples: &[ExampleInput], max_bytes: usize) -> Vec<&[ExampleInput]> {
    let mut batches = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (index, example) in examples.iter().enumerate() {
        let size = serde_json::to_string(example).map_or(0, |text| text.len());
        let full = index - start == super::MAX_EXAMPLES_PER_REQUEST
            || (index > start && bytes + size > max_bytes);
        if full {
            batches.push(&examples[start..index]);
            start = index;
            bytes = 0;
        }
        bytes += size;
    }
    if start < examples.len() {
        batches.push(&examples[start..]);
    }
    batches
}

#[cfg(test)]
mod tests;
