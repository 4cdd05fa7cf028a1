//! The form a username is unique in: NFKC-normalised, then lower-cased
//! (and normalised again, as lower-casing can undo it). `Kim`, `KIM` and
//! `\u{212A}im` (with the Kelvin sign) are one name, so a look-alike
//! account can be neither made nor used to share another's log-in limit.

use unicode_normalization::UnicodeNormalization;

/// The unique form of `username`.
pub fn username_key(username: &str) -> String {
    let lowered: String = username.trim().nfkc().collect::<String>().to_lowercase();
    lowered.nfkc().collect()
}

/// How a username is stored and shown: trimmed and NFKC-normalised.
pub fn display_form(username: &str) -> String {
    username.trim().nfkc().collect()
}

#[cfg(test)]
mod tests {
    use super::{display_form, username_key};

    #[test]
    fn look_alikes_share_one_key() {
        assert_eq!(username_key("Kim"), "kim");
        assert_eq!(username_key("\u{212A}im"), "kim");
        assert_eq!(username_key(" KIM "), "kim");
        // Full-width letters are the same name too.
        assert_eq!(username_key("\u{FF2B}im"), "kim");
        assert_eq!(display_form("\u{212A}im"), "Kim");
        assert_ne!(username_key("kim"), username_key("kirn"));
    }
}
