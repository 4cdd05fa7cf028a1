//! `current_time`: the current date and time in UTC.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::{Tool, ToolError, ToolFuture};
use crate::model::ToolSpec;

/// The clock tool.
pub struct Clock;

impl Tool for Clock {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "current_time".into(),
            description: "The current date and time (UTC).".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn call(&self, _: Value) -> ToolFuture<'_> {
        let result = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|now| json!({"utc": iso_utc(now.as_secs()), "unix": now.as_secs()}))
            .map_err(|_| ToolError::new("the system clock is before 1970"));
        Box::pin(std::future::ready(result))
    }
}

/// `2026-11-21T07:40:00Z` from Unix seconds (the civil-from-days algorithm).
fn iso_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::iso_utc;

    #[test]
    fn dates_are_civil() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_utc(1_795_244_400), "2026-11-21T07:00:00Z");
    }
}
