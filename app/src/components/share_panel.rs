//! The owner's Share dialog on a graph's page (the Share button in the
//! graph's bar): share links (role, expiry, copy, revoke) and teammates
//! granted a role by name.

use leptos::form::ActionForm;
use leptos::prelude::*;

use super::local_time::timestamp;
use crate::access::Role;
use crate::components::{CopyButton, Dialog, ErrorView, FormError, action_error, page_origin};
use crate::sharing::{
    CreateShareLink, Member, RevokeShareLink, SetMemberRole, ShareLink, Sharing, get_sharing,
};

/// The dialog; only offered to the graph's owner. Escape, the backdrop
/// and Done close it.
#[component]
pub fn ShareDialog(graph_id: String, open: RwSignal<bool>) -> impl IntoView {
    let done = NodeRef::<leptos::html::Button>::new();
    // Focus moves into the dialog, so Tab works at once.
    Effect::new(move |_| {
        if let Some(button) = done.get() {
            let _ = button.focus();
        }
    });
    view! {
        <Dialog on_close=Callback::new(move |()| open.set(false)) labelled_by="share-title" class="share-dialog">
            <SharePanel graph_id />
            <div class="dialog-actions">
                <button class="button" type="button" node_ref=done on:click=move |_| open.set(false)>"Done"</button>
            </div>
        </Dialog>
    }
}

/// Links and teammates.
#[component]
fn SharePanel(graph_id: String) -> impl IntoView {
    let create = ServerAction::<CreateShareLink>::new();
    let revoke = ServerAction::<RevokeShareLink>::new();
    let member = ServerAction::<SetMemberRole>::new();
    let sharing = Resource::new(
        {
            let graph_id = graph_id.clone();
            move || {
                (
                    graph_id.clone(),
                    create.version().get() + revoke.version().get() + member.version().get(),
                )
            }
        },
        |(graph_id, _)| get_sharing(graph_id),
    );
    let member_graph = graph_id.clone();
    view! {
        <section class="share-panel" aria-labelledby="share-title">
            <h2 id="share-title">"Share"</h2>
            <p class="page-sub">"A link gives whoever opens it (after logging in) the role you choose; teammates get theirs by name."</p>
            <ActionForm action=create attr:class="share-form">
                <input type="hidden" name="graph_id" value=graph_id.clone() />
                <label class="field">
                    <span class="field-label">"Anyone with the link can"</span>
                    <select name="role" data-testid="link-role">
                        <option value="viewer" selected>"view"</option>
                        <option value="editor">"edit"</option>
                    </select>
                </label>
                <label class="field">
                    <span class="field-label">"Expires"</span>
                    <select name="expires_in_hours">
                        <option value="" selected>"never"</option>
                        <option value="24">"in a day"</option>
                        <option value="168">"in a week"</option>
                        <option value="720">"in 30 days"</option>
                    </select>
                </label>
                <button class="button button-primary" type="submit" disabled=create.pending()>
                    "Create link"
                </button>
            </ActionForm>
            <FormError error=action_error(create.value(), create.version()) />
            <FormError error=action_error(revoke.value(), revoke.version()) />
            <Transition fallback=|| view! { <p class="loading">"Loading links…"</p> }>
                <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                    {move || Suspend::new(async move {
                        sharing.await.map(|sharing| view! { <Links sharing revoke /> })
                    })}
                </ErrorBoundary>
            </Transition>
            <h3 class="share-subtitle">"Teammates"</h3>
            <Transition fallback=|| view! { <p class="loading">"Loading teammates…"</p> }>
                <ErrorBoundary fallback=|errors| view! { <ErrorView errors /> }>
                    {move || Suspend::new(async move {
                        sharing.await.map(|sharing| view! { <Members members=sharing.members /> })
                    })}
                </ErrorBoundary>
            </Transition>
            <ActionForm action=member attr:class="share-form">
                <input type="hidden" name="graph_id" value=member_graph />
                <label class="field field-grow">
                    <span class="field-label">"Username"</span>
                    <input name="username" required maxlength="64" />
                </label>
                <label class="field">
                    <span class="field-label">"Role"</span>
                    <select name="role">
                        <option value="viewer" selected>"viewer"</option>
                        <option value="editor">"editor"</option>
                        <option value="none">"no access"</option>
                    </select>
                </label>
                <button class="button" type="submit" disabled=member.pending()>"Set"</button>
            </ActionForm>
            <FormError error=action_error(member.value(), member.version()) />
        </section>
    }
}

#[component]
fn Links(sharing: Sharing, revoke: ServerAction<RevokeShareLink>) -> impl IntoView {
    let live: Vec<ShareLink> = sharing
        .links
        .into_iter()
        .filter(|link| !link.revoked && !link.expired)
        .collect();
    view! {
        {if live.is_empty() {
            view! { <p class="empty-note">"No active links. Create one to share this graph."</p> }.into_any()
        } else {
            view! {
                <ul class="link-list">
                    {live.into_iter().map(|link| view! { <LinkRow link revoke /> }).collect_view()}
                </ul>
            }
            .into_any()
        }}
    }
}

/// The teammates with a role of their own, under their heading.
#[component]
fn Members(members: Vec<Member>) -> impl IntoView {
    if members.is_empty() {
        return view! { <p class="empty-note">"No teammates yet. Give someone a role by their username."</p> }
            .into_any();
    }
    view! {
        <ul class="member-list">
            {members
                .into_iter()
                .map(|member| view! {
                    <li><span>{member.username}</span><span class="badge">{member.role.as_str()}</span></li>
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn LinkRow(link: ShareLink, revoke: ServerAction<RevokeShareLink>) -> impl IntoView {
    let url = format!("{}{}", page_origin(), link.path);
    let expiry = move || {
        link.expires_at
            .as_deref()
            .map_or("never expires".to_string(), |at| {
                format!("expires {}", timestamp(at))
            })
    };
    let role = match link.role {
        Role::Editor => "can edit",
        _ => "can view",
    };
    let uses = match link.uses {
        0 => "not opened yet".to_string(),
        1 => "opened by 1 person".to_string(),
        n => format!("opened by {n} people"),
    };
    view! {
        <li class="link-row">
            <input class="mono link-url" readonly value=url.clone() aria-label="Share link" data-testid="share-url" />
            <CopyButton text=url />
            <span class="link-meta">{move || format!("{role} · {} · {uses}", expiry())}</span>
            <ActionForm action=revoke attr:class="inline-form">
                <input type="hidden" name="graph_id" value=link.graph_id.to_string() />
                <input type="hidden" name="link_id" value=link.id.clone() />
                <button class="button button-small button-danger" type="submit">"Revoke"</button>
            </ActionForm>
        </li>
    }
}
