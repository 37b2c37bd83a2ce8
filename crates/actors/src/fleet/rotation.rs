//! Context rotation: when a member's context use crosses the threshold it
//! is asked for a handoff note in a fixed template (done, in progress,
//! next); its successor starts with the note. A note that does not come
//! (or does not follow the template) is replaced by a skeleton the daemon
//! writes from the member's events, so a missing note never blocks a
//! rotation.

use serde::{Deserialize, Serialize};

/// The default threshold, in percent of the context window.
pub const DEFAULT_THRESHOLD_PCT: f64 = 60.0;

/// The default ceiling at which a running turn is cut short to rotate.
pub const DEFAULT_CEILING_PCT: f64 = 90.0;

/// The template's three headings, in order.
pub const SECTIONS: [&str; 3] = ["## Done", "## In progress", "## Next"];

/// Should a member whose context use is `used_pct` rotate?
pub fn should_rotate(used_pct: Option<f64>, threshold_pct: f64) -> bool {
    used_pct.is_some_and(|used| used.is_finite() && used >= threshold_pct)
}

/// A handoff note, by section.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffNote {
    /// What is finished.
    pub done: String,
    /// What was under way.
    pub in_progress: String,
    /// What comes next.
    pub next: String,
    /// The member wrote it (`false`: the daemon's skeleton).
    pub from_member: bool,
}

/// The request sent to a member that is to rotate.
pub fn note_request() -> String {
    format!(
        "Your context is nearly full; a fresh session will continue your work. \
         Reply with a handoff note in exactly this template, nothing else:\n\n\
         {}\n<what is finished>\n\n{}\n<what was under way>\n\n{}\n<what comes next>\n",
        SECTIONS[0], SECTIONS[1], SECTIONS[2]
    )
}

impl HandoffNote {
    /// Reads a member's note; `None` when it does not follow the template
    /// (each heading once, in order).
    pub fn parse(text: &str) -> Option<HandoffNote> {
        let mut at = Vec::with_capacity(SECTIONS.len());
        for heading in SECTIONS {
            let found = text
                .match_indices(heading)
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            let [i] = found.as_slice() else { return None };
            at.push(*i);
        }
        if !at.is_sorted() {
            return None;
        }
        let body = |k: usize| {
            let start = at[k] + SECTIONS[k].len();
            let end = at.get(k + 1).copied().unwrap_or(text.len());
            text[start..end].trim().to_owned()
        };
        Some(HandoffNote {
            done: body(0),
            in_progress: body(1),
            next: body(2),
            from_member: true,
        })
    }

    /// The daemon's skeleton, from the member's finished steps, its last
    /// running one and what it was last asked.
    pub fn skeleton(done: &[String], in_progress: Option<&str>, last_ask: &str) -> HandoffNote {
        let list = |items: &[String]| {
            if items.is_empty() {
                "(nothing recorded)".to_owned()
            } else {
                items
                    .iter()
                    .map(|i| format!("- {i}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        };
        HandoffNote {
            done: list(done),
            in_progress: in_progress.unwrap_or("(nothing recorded)").to_owned(),
            next: format!("Continue from the last request: {last_ask}"),
            from_member: false,
        }
    }

    /// The note as the successor's first prompt holds it.
    pub fn render(&self) -> String {
        let who = if self.from_member {
            "your predecessor in this role"
        } else {
            "the daemon (your predecessor left no note)"
        };
        format!(
            "You continue the work of {who}. Handoff note:\n\n{}\n{}\n\n{}\n{}\n\n{}\n{}\n",
            SECTIONS[0], self.done, SECTIONS[1], self.in_progress, SECTIONS[2], self.next
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rotation_starts_at_the_threshold_and_never_without_a_figure() {
        assert!(!should_rotate(None, DEFAULT_THRESHOLD_PCT));
        assert!(!should_rotate(Some(59.9), DEFAULT_THRESHOLD_PCT));
        assert!(should_rotate(Some(60.0), DEFAULT_THRESHOLD_PCT));
        assert!(!should_rotate(Some(f64::NAN), DEFAULT_THRESHOLD_PCT));
    }

    #[test]
    fn a_note_in_the_template_is_read_and_rendered_for_the_successor() {
        let text = "Sure.\n## Done\nparsed the logs\n## In progress\nthe report\n## Next\nwrite Conclusion";
        let note = HandoffNote::parse(text).unwrap();
        assert_eq!(note.done, "parsed the logs");
        assert_eq!(note.next, "write Conclusion");
        let first = note.render();
        assert!(first.contains("## In progress\nthe report"), "{first}");
        assert!(note_request().contains("## Next"));
    }

    #[test]
    fn a_note_out_of_template_is_not_a_note_and_the_skeleton_stands_in() {
        assert_eq!(
            HandoffNote::parse("## Next\nx\n## Done\ny\n## In progress\nz"),
            None
        );
        assert_eq!(
            HandoffNote::parse("## Done\n## Done\n## In progress\n## Next"),
            None
        );
        assert_eq!(HandoffNote::parse("I am done."), None);
        let skeleton = HandoffNote::skeleton(&["s1 accepted".into()], None, "write r.md");
        assert!(!skeleton.from_member);
        let first = skeleton.render();
        assert!(
            first.contains("- s1 accepted") && first.contains("left no note"),
            "{first}"
        );
    }
}
