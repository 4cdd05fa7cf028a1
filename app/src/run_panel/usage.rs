//! Tokens and cost as people read them: the run's total in the run
//! panel's bar, and a graph's usage over the last days (runs, tokens and
//! cost per day, as bars) above its run list. Figures come from the run's
//! `usage` events (live) and the runs' records (history).

use heddle_engine::usage::UsageTotals;
use leptos::prelude::*;

use crate::live::Watch;
use crate::runs::GraphUsage;

/// `1234` as "1,234"; a million and more as "1.2M".
pub fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        return format!("{:.1}M", n as f64 / 1e6);
    }
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dollars with the digits that matter: "$0", "$0.00042", "$0.013", "$12.40".
pub fn cost(usd: f64) -> String {
    if usd <= 0.0 {
        "$0".into()
    } else if usd < 0.01 {
        format!("${}", significant(usd, 2))
    } else if usd < 1.0 {
        format!("${usd:.3}")
    } else {
        format!("${usd:.2}")
    }
}

fn significant(value: f64, digits: i32) -> String {
    let magnitude = value.log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

/// "1 run", "3 runs".
pub fn runs(n: u64) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// "1,234 tokens · $0.0012", or `None` when no model was called. Calls to
/// models without a price say so instead of pretending they were free.
pub fn summary(usage: &UsageTotals) -> Option<String> {
    if usage.is_empty() {
        return None;
    }
    let mut text = format!(
        "{} tokens · {}",
        tokens(usage.tokens()),
        cost(usage.cost_usd)
    );
    if usage.unpriced_calls > 0 {
        text.push_str(&format!(" (+{} unpriced)", usage.unpriced_calls));
    }
    Some(text)
}

/// What the watched run used, at the moment the canvas shows.
#[component]
pub fn RunUsage(watch: Watch) -> impl IntoView {
    let usage = Memo::new(move |_| watch.view.with(|view| view.usage));
    move || {
        usage.with(|usage| {
            summary(usage).map(|text| {
                let detail = format!(
                    "{} model calls: {} prompt tokens ({} cached), {} completion tokens",
                    usage.calls,
                    tokens(usage.prompt_tokens),
                    tokens(usage.cached_tokens),
                    tokens(usage.completion_tokens)
                );
                view! { <span class="run-usage" data-testid="run-usage" title=detail>{text}</span> }
            })
        })
    }
}

/// A graph's usage over the last days with runs: a bar per day (height by
/// tokens), with the totals above.
#[component]
pub fn UsageChart(usage: GraphUsage) -> impl IntoView {
    if usage.total.is_empty() {
        return view! {
            <p class="empty-note usage-note">
                {format!("{}; no model calls yet.", runs(usage.runs))}
            </p>
        }
        .into_any();
    }
    let most = usage
        .days
        .iter()
        .map(|day| day.usage.tokens())
        .max()
        .unwrap_or(1)
        .max(1);
    let heading = format!(
        "{} · {}",
        runs(usage.runs),
        summary(&usage.total).unwrap_or_default()
    );
    view! {
        <figure class="usage-chart" data-testid="usage-chart">
            <figcaption>{heading}</figcaption>
            <ol class="usage-bars" aria-label="Tokens per day">
                {usage.days.into_iter().map(|day| {
                    let share = day.usage.tokens() as f64 / most as f64;
                    let label = format!(
                        "{}: {}, {}",
                        day.day,
                        runs(day.runs),
                        summary(&day.usage).unwrap_or_else(|| "no model calls".into())
                    );
                    view! {
                        <li class="usage-day" title=label.clone() aria-label=label>
                            <span class="usage-bar" style=format!("height: {:.0}%", (share * 100.0).max(2.0))></span>
                            <span class="usage-day-name">{day.day.get(5..).unwrap_or(&day.day).to_string()}</span>
                        </li>
                    }
                }).collect_view()}
            </ol>
        </figure>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(tokens(0), "0");
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(1_234), "1,234");
        assert_eq!(tokens(123_456), "123,456");
        assert_eq!(tokens(2_345_678), "2.3M");
        assert_eq!(cost(0.0), "$0");
        assert_eq!(cost(0.000_423), "$0.00042");
        assert_eq!(cost(0.0042), "$0.0042");
        assert_eq!(cost(0.0132), "$0.013");
        assert_eq!(cost(12.4), "$12.40");
        let usage = UsageTotals {
            calls: 3,
            prompt_tokens: 1_000,
            completion_tokens: 234,
            cost_usd: 0.0012,
            unpriced_calls: 1,
            ..UsageTotals::default()
        };
        assert_eq!(
            summary(&usage).as_deref(),
            Some("1,234 tokens · $0.0012 (+1 unpriced)")
        );
        assert_eq!(summary(&UsageTotals::default()), None);
    }
}
