//! The agent a command asks, as `lark certify` and `lark lean emit --segment-agent` choose it:
//! a command, an OpenAI-compatible endpoint, or the built-in prover; and its budget.

use agent::{Agent, Budget, BuiltIn, CommandAgent, EndpointAgent};
use clap::Args;
use std::time::Duration;

#[derive(Args)]
pub struct AgentArgs {
    /// An external agent: a command run with `sh -c`, the request as JSON on stdin, the response
    /// as JSON on stdout (`{"proof": "…"}`, or `{"segments": […]}` for a segmentation). Default:
    /// the built-in prover.
    #[arg(long, value_name = "CMD", conflicts_with = "endpoint")]
    pub agent: Option<String>,
    /// An OpenAI-compatible chat-completions endpoint (`http://host:port/v1`).
    #[arg(long, value_name = "URL", requires = "model")]
    pub endpoint: Option<String>,
    /// The endpoint's model.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The environment variable holding the endpoint's API key (never printed or stored).
    #[arg(long, value_name = "VAR")]
    pub key_env: Option<String>,
    /// Attempts per obligation (or for the segmentation).
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: u32,
    /// Seconds per agent call.
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub agent_timeout: u64,
    /// Seconds for all the attempts on one obligation (or on the segmentation).
    #[arg(long, value_name = "S", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// Tokens an endpoint may spend in the whole run, every obligation (or the segmentation)
    /// together: its answers' `usage`, else estimated as a quarter of the bytes sent and
    /// received. Command agents report no tokens; their budget is time, attempts and output.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub token_budget: Option<u64>,
}

impl AgentArgs {
    /// The agent the flags name: `--agent`, else `--endpoint`, else the built-in prover.
    pub fn agent(&self) -> Box<dyn Agent> {
        match (&self.agent, &self.endpoint) {
            (Some(cmd), _) => Box::new(CommandAgent::new(cmd.clone())),
            (None, Some(url)) => {
                Box::new(EndpointAgent { base_url: url.clone(), model: self.model.clone().unwrap_or_default(), key_env: self.key_env.clone() })
            }
            (None, None) => Box::new(BuiltIn::new()),
        }
    }

    /// The budget the flags set: attempts, total time, time per call, tokens. Its clones share
    /// one token count: use one budget for the whole run.
    pub fn budget(&self) -> Budget {
        Budget {
            attempts: self.attempts,
            total: Duration::from_secs(self.budget),
            per_call: agent::Limits { timeout: Duration::from_secs(self.agent_timeout), ..agent::Limits::default() },
            tokens: self.token_budget,
            ..Budget::default()
        }
    }

    /// A warning when a flag cannot take effect: a token budget for an agent that counts none.
    pub fn warning(&self) -> Option<String> {
        (self.token_budget.is_some() && self.endpoint.is_none())
            .then(|| "--token-budget applies to --endpoint agents only; other agents report no tokens (their budget is time, attempts and output)".into())
    }
}
