//! Model routing: the capability matrix in the user's config says which
//! CLI (and model) is fit for which domain and task type, each cell with
//! its evidence (a note, a link, a recorded fleet run). With a matrix, every
//! step a supervisor dispatches names its `domain` and `task` type, and the
//! worker it picked must have a cell for them; a pick the matrix does not
//! support is refused with the reason and what it does support. Without a
//! matrix, nothing is checked. Pure: no IO.

use serde::{Deserialize, Serialize};

use crate::lane::CliKind;

/// One cell of the matrix (`[[fleet_matrix]]` in config.toml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityCell {
    /// The domain (`rust`, `docs`, `security`...).
    pub domain: String,
    /// The task type (`review`, `write`, `refactor`...).
    pub task: String,
    /// The CLI fit for it.
    pub cli: CliKind,
    /// The model, when only one of the CLI's models is fit; none: any.
    #[serde(default)]
    pub model: Option<String>,
    /// Why: a note, a link, or a recorded fleet run.
    pub evidence: String,
}

/// Checks a matrix as loaded: every cell names a domain, a task type and
/// its evidence.
pub fn validate(matrix: &[CapabilityCell]) -> Result<(), String> {
    for (i, c) in matrix.iter().enumerate() {
        if c.domain.trim().is_empty() || c.task.trim().is_empty() {
            return Err(format!(
                "fleet_matrix[{i}]: domain and task may not be empty"
            ));
        }
        if c.evidence.trim().is_empty() {
            return Err(format!(
                "fleet_matrix[{i}] ({} × {} with {}): a cell needs its evidence (a note, a link, a fleet run)",
                c.domain, c.task, c.cli
            ));
        }
    }
    Ok(())
}

/// May a member running `cli` with `model` take a step of `domain` ×
/// `task`? Always, without a matrix.
pub fn check_pick(
    matrix: &[CapabilityCell],
    domain: Option<&str>,
    task: Option<&str>,
    cli: CliKind,
    model: Option<&str>,
) -> Result<(), String> {
    if matrix.is_empty() {
        return Ok(());
    }
    let (Some(domain), Some(task)) = (domain, task) else {
        return Err("the capability matrix is in force: name the step's domain and task".into());
    };
    let cells: Vec<&CapabilityCell> = matrix
        .iter()
        .filter(|c| c.domain == domain && c.task == task)
        .collect();
    let fits =
        |c: &&CapabilityCell| c.cli == cli && c.model.as_deref().is_none_or(|m| Some(m) == model);
    if cells.iter().any(fits) {
        return Ok(());
    }
    let model = model.map_or(String::new(), |m| format!(" ({m})"));
    if cells.is_empty() {
        return Err(format!(
            "the capability matrix has no cell for {domain} × {task}: no member may take it"
        ));
    }
    let supported: Vec<String> = cells
        .iter()
        .map(|c| match &c.model {
            Some(m) => format!("{} ({m})", c.cli),
            None => c.cli.to_string(),
        })
        .collect();
    Err(format!(
        "the capability matrix does not support {cli}{model} for {domain} × {task}; it supports {}",
        supported.join(", ")
    ))
}

/// What the supervisor is told about routing: nothing without a matrix;
/// else which member may take which domain × task type.
pub fn describe(
    matrix: &[CapabilityCell],
    members: &[(String, CliKind, Option<String>)],
) -> String {
    if matrix.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "Routing: name each step's \"domain\" and \"task_type\"; the capability matrix lets:"
            .to_owned(),
    ];
    for (role, cli, model) in members {
        let fit: Vec<String> = matrix
            .iter()
            .filter(|c| {
                check_pick(
                    matrix,
                    Some(&c.domain),
                    Some(&c.task),
                    *cli,
                    model.as_deref(),
                )
                .is_ok()
            })
            .map(|c| format!("{} × {}", c.domain, c.task))
            .collect();
        if !fit.is_empty() {
            lines.push(format!("- {role} ({cli}): {}", fit.join(", ")));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn matrix() -> Vec<CapabilityCell> {
        vec![CapabilityCell {
            domain: "rust".into(),
            task: "review".into(),
            cli: CliKind::Codex,
            model: Some("gpt-x".into()),
            evidence: "fleet run 12".into(),
        }]
    }

    #[test]
    fn a_pick_the_matrix_supports_passes_and_others_are_refused_with_the_reason() {
        let m = matrix();
        let pick = |cli, model| check_pick(&m, Some("rust"), Some("review"), cli, model);
        assert!(pick(CliKind::Codex, Some("gpt-x")).is_ok());
        let why = pick(CliKind::Codex, Some("gpt-y")).unwrap_err();
        assert!(
            why.contains("does not support codex (gpt-y)") && why.contains("codex (gpt-x)"),
            "{why}"
        );
        assert!(pick(CliKind::Claude, None).is_err());
        let why = check_pick(&m, Some("docs"), Some("write"), CliKind::Codex, None).unwrap_err();
        assert!(why.contains("no cell for docs × write"), "{why}");
        let why = check_pick(&m, None, None, CliKind::Codex, None).unwrap_err();
        assert!(why.contains("name the step's domain and task"), "{why}");
        assert!(
            check_pick(&[], None, None, CliKind::Pi, None).is_ok(),
            "no matrix, no check"
        );
    }

    #[test]
    fn a_cell_without_evidence_is_refused() {
        let mut m = matrix();
        assert!(validate(&m).is_ok());
        m[0].evidence = " ".into();
        assert!(validate(&m).unwrap_err().contains("needs its evidence"));
    }
}
