//! Timestamps as Heddle stores and sends them: ISO-8601 UTC text with
//! milliseconds (`2026-11-22T19:30:00.123Z`, sortable as text), read into
//! an instant so two can be compared across midnight, months and years.
//! No time crate: the browser build stays small, and the format is fixed.

/// An instant, in milliseconds since 1970-01-01 UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// Reads `2026-11-22T19:30:00.123Z` (the fraction optional, `Z` or
    /// `+00:00` at the end); `None` for anything else.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let bytes = text.as_bytes();
        if bytes.len() < 20 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<i64> {
            let part = text.get(range)?;
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
        let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
        if !(1..=12).contains(&month)
            || !(1..=31).contains(&day)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let rest = &text[19..];
        let (millis, zone) = match rest.strip_prefix('.') {
            Some(fraction) => {
                let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
                if digits == 0 {
                    return None;
                }
                let padded = format!("{:0<3}", &fraction[..digits.min(3)]);
                (padded.parse::<i64>().ok()?, &fraction[digits..])
            }
            None => (0, rest),
        };
        if zone != "Z" && zone != "+00:00" {
            return None;
        }
        let days = days_from_civil(year, month, day);
        Some(Timestamp(
            ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis,
        ))
    }

    /// Milliseconds since 1970-01-01 UTC.
    pub fn millis(self) -> i64 {
        self.0
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A span of time as people say it: `850 ms`, `4.2 s`, `12 min`, `3 h 5 min`,
/// `2 d 4 h`.
pub fn spoken(millis: i64) -> String {
    let seconds = millis as f64 / 1000.0;
    let minutes = millis / 60_000;
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis < 60_000 {
        format!("{seconds:.1} s")
    } else if minutes < 60 {
        format!("{:.0} min", seconds / 60.0)
    } else if minutes < 24 * 60 {
        format!("{} h {} min", minutes / 60, minutes % 60)
    } else {
        format!("{} d {} h", minutes / (24 * 60), minutes / 60 % 24)
    }
}

#[cfg(test)]
mod tests {
    use super::{Timestamp, spoken};

    #[test]
    fn stored_timestamps_read_as_instants() {
        let at = |text| Timestamp::parse(text).map(Timestamp::millis);
        assert_eq!(at("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(at("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(at("2026-11-18T11:06:40.007Z"), Some(1_795_000_000_007));
        assert_eq!(at("2000-02-29T00:00:00.5+00:00"), Some(951_782_400_500));
        for bad in [
            "",
            "2026-11-18",
            "2026-13-01T00:00:00Z",
            "2026-11-18T11:06:40.007+02:00",
            "2026-11-18T11:06:4x.000Z",
            "2026-11-18T11:06:40.Z",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }

    #[test]
    fn spans_are_said_in_the_largest_fitting_unit() {
        assert_eq!(spoken(850), "850 ms");
        assert_eq!(spoken(1500), "1.5 s");
        assert_eq!(spoken(5 * 60_000), "5 min");
        assert_eq!(spoken(3 * 3_600_000 + 5 * 60_000), "3 h 5 min");
        assert_eq!(spoken(2 * 86_400_000 + 4 * 3_600_000), "2 d 4 h");
    }
}
