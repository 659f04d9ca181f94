//! The settings the VS Code extension sends, as `initializationOptions` and as
//! `workspace/didChangeConfiguration` `{settings: {lark: {...}}}`:
//! `{server: {path}, compiler: {path, arch, includePaths, defines}, smt: {timeoutMs},
//! interfaceFile, logLevel, strictRaces, firstLook, agent: {command, endpoint, model, keyEnv, tokenBudget}}`. The agent settings say
//! which proof agent "Certify" uses (the built-in prover when none is set) and how many tokens
//! an endpoint may spend on one "Certify kernel" run (`tokenBudget`; none when absent); they come from the
//! user's settings, and the extension marks them restricted so an untrusted workspace cannot set
//! them. Read leniently: unknown keys are ignored, missing or ill-typed ones
//! take their defaults.

use serde_json::Value;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct ClientSettings {
    pub compiler_path: String,
    pub compiler_arch: String,
    pub include_paths: Vec<String>,
    pub defines: Vec<String>,
    /// Per SMT query (`None`, the setting absent or `null`: the solver's default).
    pub timeout_ms: Option<u64>,
    /// Write-write races of equal values are races, not tolerated warnings.
    pub strict_races: bool,
    /// Publish a first look at kernels without a declared launch before their general check.
    pub first_look: bool,
    pub interface_file: String,
    pub log_level: String,
    /// A command run as the proof agent (empty: none).
    pub agent_command: String,
    /// A chat-completions endpoint (`http://host:port/v1`; empty: none), its model, and the
    /// environment variable holding its key.
    pub agent_endpoint: String,
    pub agent_model: String,
    pub agent_key_env: String,
    /// The most tokens an endpoint may spend on one certification (`None`: no limit).
    pub agent_token_budget: Option<u64>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            compiler_path: String::new(),
            compiler_arch: "sm_80".into(),
            include_paths: vec![],
            defines: vec![],
            timeout_ms: None,
            strict_races: false,
            first_look: true,
            interface_file: String::new(),
            log_level: "info".into(),
            agent_command: String::new(),
            agent_endpoint: String::new(),
            agent_model: String::new(),
            agent_key_env: String::new(),
            agent_token_budget: None,
        }
    }
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn string(v: &Value, path: &[&str]) -> Option<String> {
    at(v, path).and_then(Value::as_str).map(|s| s.trim().to_string())
}

fn strings(v: &Value, path: &[&str]) -> Option<Vec<String>> {
    at(v, path).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

const KNOWN: [&str; 8] = ["server", "compiler", "smt", "interfaceFile", "logLevel", "strictRaces", "firstLook", "agent"];

/// Finds the `lark` settings object in what a client sent: the object itself, `{lark: ...}` or
/// `{settings: {lark: ...}}`.
pub fn find_lark(v: &Value) -> Option<&Value> {
    if let Some(l) = at(v, &["settings", "lark"]).or_else(|| v.get("lark")) {
        return Some(l);
    }
    let obj = v.as_object()?;
    KNOWN.iter().any(|k| obj.contains_key(*k)).then_some(v)
}

impl ClientSettings {
    /// Reads the `lark` object; what is absent or of the wrong type keeps its default.
    pub fn from_json(v: &Value) -> ClientSettings {
        let d = ClientSettings::default();
        ClientSettings {
            compiler_path: string(v, &["compiler", "path"]).unwrap_or(d.compiler_path),
            compiler_arch: string(v, &["compiler", "arch"]).filter(|s| !s.is_empty()).unwrap_or(d.compiler_arch),
            include_paths: strings(v, &["compiler", "includePaths"]).unwrap_or(d.include_paths),
            defines: strings(v, &["compiler", "defines"]).unwrap_or(d.defines),
            timeout_ms: at(v, &["smt", "timeoutMs"]).and_then(Value::as_f64).filter(|t| t.is_finite() && *t >= 1.0).map(|t| t.round() as u64).or(d.timeout_ms),
            strict_races: at(v, &["strictRaces"]).and_then(Value::as_bool).unwrap_or(d.strict_races),
            first_look: at(v, &["firstLook"]).and_then(Value::as_bool).unwrap_or(d.first_look),
            interface_file: string(v, &["interfaceFile"]).unwrap_or(d.interface_file),
            log_level: string(v, &["logLevel"]).unwrap_or(d.log_level),
            agent_command: string(v, &["agent", "command"]).unwrap_or(d.agent_command),
            agent_endpoint: string(v, &["agent", "endpoint"]).unwrap_or(d.agent_endpoint),
            agent_model: string(v, &["agent", "model"]).unwrap_or(d.agent_model),
            agent_key_env: string(v, &["agent", "keyEnv"]).unwrap_or(d.agent_key_env),
            agent_token_budget: at(v, &["agent", "tokenBudget"])
                .and_then(Value::as_f64)
                .filter(|t| t.is_finite() && *t >= 1.0)
                .map_or(d.agent_token_budget, |t| Some(t.round() as u64)),
        }
    }

    /// The proof agent these settings name: a command, else an endpoint, else the built-in
    /// prover.
    pub fn agent(&self) -> Box<dyn agent::Agent> {
        if !self.agent_command.is_empty() {
            Box::new(agent::CommandAgent::new(self.agent_command.clone()))
        } else if !self.agent_endpoint.is_empty() {
            let key_env = (!self.agent_key_env.is_empty()).then(|| self.agent_key_env.clone());
            Box::new(agent::EndpointAgent { base_url: self.agent_endpoint.clone(), model: self.agent_model.clone(), key_env })
        } else {
            Box::new(agent::BuiltIn::new())
        }
    }

    pub fn to_ide(&self, workspace_root: Option<PathBuf>) -> ide::Settings {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        ide::Settings {
            compiler: ide::CompilerSettings {
                path: opt(&self.compiler_path),
                arch: opt(&self.compiler_arch),
                include_paths: self.include_paths.clone(),
                defines: self.defines.clone(),
            },
            timeout_ms: self.timeout_ms,
            interface_file: opt(&self.interface_file).map(PathBuf::from),
            workspace_root,
            strict_races: self.strict_races,
            first_look: self.first_look,
            ..ide::Settings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_extension_sends_and_tolerates_the_rest() {
        let sent = json!({"settings": {"lark": {"server": {"path": ""}, "compiler": {"path": "/x/clang", "arch": "sm_90", "includePaths": ["inc", 3], "defines": ["N=4"]}, "smt": {"timeoutMs": 500}, "interfaceFile": "", "logLevel": "debug", "future": 1}}});
        let s = ClientSettings::from_json(find_lark(&sent).unwrap());
        assert_eq!(s.compiler_path, "/x/clang");
        assert_eq!(s.compiler_arch, "sm_90");
        assert_eq!(s.include_paths, vec!["inc"]);
        assert_eq!(s.timeout_ms, Some(500));
        assert_eq!(ClientSettings::from_json(&json!({"smt": {"timeoutMs": null}})).timeout_ms, None, "the solver's default");
        assert!(!s.strict_races, "tolerant by default");
        assert!(ClientSettings::from_json(&json!({"strictRaces": true})).to_ide(None).strict_races);
        assert!(s.first_look, "a first look by default");
        assert!(!ClientSettings::from_json(&json!({"firstLook": false})).to_ide(None).first_look);
        assert_eq!(s.log_level, "debug");
        let bad = json!({"smt": {"timeoutMs": "soon"}, "compiler": 7});
        assert_eq!(ClientSettings::from_json(find_lark(&bad).unwrap()), ClientSettings::default());
        assert!(find_lark(&json!({"other": 1})).is_none());
        assert!(find_lark(&json!(null)).is_none());
    }

    #[test]
    fn reads_the_agent_s_token_budget() {
        assert_eq!(ClientSettings::from_json(&json!({"agent": {"tokenBudget": 50000}})).agent_token_budget, Some(50000));
        for bad in [json!({"agent": {"tokenBudget": 0}}), json!({"agent": {"tokenBudget": "lots"}}), json!({"agent": {}})] {
            assert_eq!(ClientSettings::from_json(&bad).agent_token_budget, None, "{bad}");
        }
    }
}
