//! Pieces of UI the pages share, one file per component.

mod code_spans;
mod copy_button;
mod dialog;
mod error_view;
mod form_error;
mod graph_preview;
mod header;
mod local_time;
mod markdown;
mod not_found_view;
mod publish_control;
mod share_panel;
mod skip_link;
mod triggers;

pub use code_spans::CodeSpans;
pub use copy_button::{CopyButton, page_origin};
pub use dialog::{Dialog, focus_first, focus_once_shown, focus_when_drawn};
pub use error_view::ErrorView;
pub use form_error::{FormError, action_error, action_error_in};
pub use graph_preview::GraphPreview;
pub use header::Header;
pub use local_time::{LocalTime, provide_local_clock, timestamp, when};
pub use markdown::{Markdown, to_html as markdown_html};
pub use not_found_view::NotFoundView;
pub use publish_control::PublishControl;
pub use share_panel::ShareDialog;
pub use skip_link::SkipLink;
pub use triggers::TriggersPanel;
