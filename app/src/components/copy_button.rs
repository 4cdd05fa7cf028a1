//! A Copy button for a secret or a URL shown once, and this server's
//! origin as the browser reached it (to show whole URLs).

use leptos::prelude::*;

/// Copies `text` to the clipboard; says "Copied" after.
#[component]
pub fn CopyButton(text: String) -> impl IntoView {
    let copied = RwSignal::new(false);
    view! {
        <button class="button button-primary" type="button" on:click=move |_| {
            copy_to_clipboard(&text);
            copied.set(true);
        }>
            {move || if copied.get() { "Copied" } else { "Copy" }}
        </button>
    }
}

/// This server's origin as the browser reached it (`$HEDDLE` when
/// rendered on the server).
pub fn page_origin() -> String {
    #[cfg(feature = "hydrate")]
    if let Ok(origin) = window().location().origin() {
        return origin;
    }
    String::from("$HEDDLE")
}

/// Puts text on the clipboard (in the browser; nothing on the server).
fn copy_to_clipboard(text: &str) {
    #[cfg(feature = "hydrate")]
    {
        let promise = window().navigator().clipboard().write_text(text);
        wasm_bindgen_futures::spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = text;
}
