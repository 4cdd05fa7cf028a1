//! Enums stored and sent by name (run statuses, roles, origins, scopes):
//! [`named_enum!`] writes each variant's name once, and that one name is
//! what serde reads and writes (a `rename` per variant), what the database
//! holds (`as_str`, `parse`) and what people read (`Display`). The three
//! cannot drift apart.

/// Declares an enum whose variants each have one name:
///
/// ```
/// heddle_engine::named_enum! {
///     /// How loud.
///     #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
///     pub enum Volume {
///         /// Barely.
///         Low = "low",
///         High = "high",
///     }
/// }
/// assert_eq!(Volume::High.as_str(), "high");
/// assert_eq!(Volume::parse("low"), Some(Volume::Low));
/// assert_eq!(serde_json::to_string(&Volume::High).unwrap(), "\"high\"");
/// assert_eq!(Volume::ALL.len(), 2);
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident = $text:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                #[serde(rename = $text)]
                $variant,
            )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name it is stored, sent and shown by.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The variant named `text`, if one is.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
