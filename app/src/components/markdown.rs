//! Model replies as people read them: Markdown (paragraphs, lists, code,
//! emphasis, tables, links) rendered to HTML that is safe to put in the
//! page. A reply is untrusted text (a model repeats what it was given), so
//! raw HTML in it is shown as text, and only `http`, `https` and `mailto`
//! links, or links within the page, are kept; images become links.

use leptos::prelude::*;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// Whether a link may be followed from a reply.
fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        // No scheme before the first `/`, `?` or `#`: a relative link.
        Some((scheme, _)) if !scheme.contains(['/', '?', '#']) => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// `text` as safe HTML.
pub fn to_html(text: &str) -> String {
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        // Raw HTML is text here: a reply never adds elements of its own.
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        // An image would load from wherever the reply says: a link instead.
        Event::Start(
            Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }
            | Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            },
        ) => Event::Start(Tag::Link {
            link_type,
            dest_url: if safe_link(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("")
            },
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// A reply, rendered.
#[component]
pub fn Markdown(
    #[prop(into)] text: Signal<String>,
    #[prop(optional)] class: &'static str,
) -> impl IntoView {
    let html = Memo::new(move |_| text.with(|text| to_html(text)));
    view! { <div class=format!("markdown {class}") inner_html=html></div> }
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn markdown_renders_and_html_in_it_does_not() {
        assert_eq!(to_html("**391**"), "<p><strong>391</strong></p>\n");
        assert!(to_html("- a\n- b").contains("<li>a</li>"));
        assert!(to_html("`x < 1`").contains("<code>x &lt; 1</code>"));
        let hostile = to_html("<script>alert(1)</script> <img src=x onerror=alert(1)>");
        assert!(!hostile.contains("<script"), "{hostile}");
        assert!(!hostile.contains("<img"), "{hostile}");
        assert!(hostile.contains("&lt;script&gt;"), "{hostile}");
    }

    #[test]
    fn only_safe_links_are_kept() {
        assert!(to_html("[a](https://example.com)").contains("href=\"https://example.com\""));
        assert!(to_html("[a](#part)").contains("href=\"#part\""));
        let bad =
            to_html("[a](javascript:alert(1)) [b](JavaScript:alert(1)) [c]( data:text/html,x)");
        assert!(!bad.to_lowercase().contains("javascript:"), "{bad}");
        assert!(!bad.contains("data:"), "{bad}");
        let image = to_html("![x](https://tracker.example/p.png)");
        assert!(!image.contains("<img"), "{image}");
        assert!(
            image.contains("href=\"https://tracker.example/p.png\""),
            "{image}"
        );
    }
}
