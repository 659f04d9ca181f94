//! The commands the server executes (`workspace/executeCommand`); advertised in
//! `executeCommandProvider`, so clients register them themselves.

/// `[uri]`: drop the file's cached results and check it again.
pub const RECHECK: &str = "lark.recheck";
/// `[uri]` → string: the lifted model of every kernel of the file.
pub const SHOW_MODEL: &str = "lark.showModel";

/// `[uri, kernel?]` → `{ uri, text, kernel, segmentation }`: the kernel's generated Lean module
/// (the first kernel of the file without a name), to show as a read-only `lark-lean:` document;
/// cut along the agent's segmentation when one was accepted (`segmentation`: `"agent"`), else
/// along LARK's (`"lark"`).
pub const SHOW_LEAN: &str = "lark.showLean";

/// `[uri, kernel, segment?]`: prove the kernel's Lean obligations (or only the segment's) in the
/// background (work-done progress, cancellable); the outcome shows in the uncertified regions.
pub const CERTIFY: &str = "lark.certify";
/// `[uri, kernel]`: stop a running certification.
pub const CANCEL_CERTIFY: &str = "lark.cancelCertify";
/// `[uri, kernel]` → `{ started: true }`: ask the agent for a segmentation of the kernel in the
/// background (work-done progress, cancellable); a valid one cuts the module `lark.showLean`
/// shows.
pub const PROPOSE_SEGMENTS: &str = "lark.proposeSegments";

pub const ALL: [&str; 6] = [RECHECK, SHOW_MODEL, SHOW_LEAN, CERTIFY, CANCEL_CERTIFY, PROPOSE_SEGMENTS];

/// The VS Code extension's own "show model" command: it opens the returned text in a read-only
/// document. Code lenses name it so that clicking one shows the model (vscode-languageclient
/// drops the result of server commands); other clients send it here and get the text back. Not
/// advertised, since the extension registers it itself.
pub const SHOW_MODEL_FOR_FILE: &str = "lark.showModelForFile";

/// The extension's "show Lean obligations" command, named by the obligations code lens (as
/// [`SHOW_MODEL_FOR_FILE`] is by the model lens).
pub const SHOW_LEAN_FOR_FILE: &str = "lark.showLeanForFile";
