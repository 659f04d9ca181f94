//! An error-recovering recursive-descent parser for PTX modules.
//!
//! The parser never fails: it returns the module it could read and a list of errors. A bad
//! statement yields one error and parsing resumes at the next `;`, `}` or line. Every loop either
//! consumes a token or stops, so no input can make it hang.

use crate::ast::*;
use crate::lexer::{Lexer, Token, TokenKind};
use crate::{Diagnostic, Span};

pub struct Parser<'a> {
    text: &'a str,
    lexer: Lexer<'a>,
    tok: Token,
    /// End of the previous token, for spans of whole constructs.
    prev_end: usize,
    errors: Vec<Diagnostic>,
    /// The `.loc` in force, attached to the instructions that follow it.
    loc: Option<SourceLoc>,
    /// Depth of `{ }` / `( )` operand groups being parsed: bounded, so that no input can overflow
    /// the stack.
    nesting: u32,
    /// `{` minus `}` consumed so far, so that recovery inside a statement knows whether a `}`
    /// closes one of the statement's own vector operands or the enclosing body.
    braces: i64,
}

/// PTX never nests operand groups (`{%r1, %r2}`, `(param0)`); a little slack, then an error.
const MAX_OPERAND_NESTING: u32 = 4;

type PResult<T> = Result<T, ()>;

impl<'a> Parser<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut lexer = Lexer::new(text);
        let tok = lexer.next_token();
        Parser { text, lexer, tok, prev_end: 0, errors: Vec::new(), loc: None, nesting: 0, braces: 0 }
    }

    // ----- token plumbing -------------------------------------------------------------------

    fn slice(&self, span: Span) -> &'a str {
        &self.text[span.range()]
    }

    fn cur(&self) -> &'a str {
        self.slice(self.tok.span)
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.tok.kind == kind
    }

    fn at_word(&self, word: &str) -> bool {
        matches!(self.tok.kind, TokenKind::Ident | TokenKind::DotIdent) && self.cur() == word
    }

    fn bump(&mut self) -> Token {
        let t = self.tok;
        match t.kind {
            TokenKind::LBrace => self.braces += 1,
            TokenKind::RBrace => self.braces -= 1,
            _ => {}
        }
        self.prev_end = t.span.end as usize;
        self.tok = self.lexer.next_token();
        t
    }

    /// Consumes the current token and returns its text.
    fn bump_text(&mut self) -> &'a str {
        let t = self.bump();
        self.slice(t.span)
    }

    fn eat(&mut self, kind: TokenKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(&self) -> String {
        match self.tok.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Unknown if self.cur().starts_with("/*") => "unterminated comment".to_string(),
            TokenKind::Unknown if self.cur().starts_with('"') => "unterminated string".to_string(),
            // Control characters (a NUL in a binary file) are shown escaped, not sent raw to
            // the terminal.
            _ if self.cur().chars().any(char::is_control) => format!("`{}`", self.cur().escape_default()),
            _ => format!("`{}`", self.cur()),
        }
    }

    fn error_here(&mut self, expected: &str) {
        let message = format!("expected {expected}, found {}", self.describe());
        self.errors.push(Diagnostic { span: self.tok.span, message });
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> PResult<Token> {
        if self.at(kind) {
            Ok(self.bump())
        } else {
            self.error_here(what);
            Err(())
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Token> {
        self.expect(TokenKind::Ident, what)
    }

    fn expect_int(&mut self, what: &str) -> PResult<u64> {
        let t = self.expect(TokenKind::Int, what)?;
        match parse_int(self.slice(t.span)) {
            Some(v) if v >= 0 && v <= u64::MAX as i128 => Ok(v as u64),
            _ => {
                self.errors.push(Diagnostic { span: t.span, message: "integer out of range".into() });
                Err(())
            }
        }
    }

    fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let span = self.tok.span;
        let v = self.expect_int(what)?;
        u32::try_from(v).map_err(|_| self.errors.push(Diagnostic { span, message: "integer out of range".into() }))
    }

    /// Skips the rest of a broken module-level item that began at byte `item_start`: past the next
    /// `;` or balanced `{ ... }` (the body of a kernel whose header is broken, so that its
    /// instructions are not reported one by one), or up to a module directive that starts a new
    /// line. The item's own first token is always skipped, so recovery makes progress.
    fn recover_item(&mut self, item_start: u32) {
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::Semi => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => {
                    self.skip_braces();
                    return;
                }
                TokenKind::DotIdent if self.tok.newline_before && self.tok.span.start > item_start && is_module_directive(self.cur()) => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Whether the current token starts a function header (`.entry`, `.func`, or a linkage
    /// followed by one) on a new line: a body that reaches one has lost its closing brace.
    fn at_function_start(&self) -> bool {
        if !self.at(TokenKind::DotIdent) || !self.tok.newline_before {
            return false;
        }
        match self.cur() {
            ".entry" | ".func" => true,
            ".visible" | ".extern" | ".weak" => {
                let next = self.lexer.clone().next_token();
                next.kind == TokenKind::DotIdent && matches!(self.slice(next.span), ".entry" | ".func")
            }
            _ => false,
        }
    }

    /// Skips to the end of a broken statement that began at byte `stmt_start`: past the next `;`,
    /// or up to a `}` or a token that starts a new line, whichever comes first. A token on a new
    /// line is kept when the statement began before it (`st [%rd1], %f1` missing its `;` must
    /// not swallow the `ret;` on the next line); the statement's own first token is always skipped,
    /// so recovery makes progress. A `}` ends recovery unless it closes a `{` of the statement
    /// itself (`mov.b32 {%r1 %r2}, %r3;`), whose braces were `braces` before it began.
    fn recover(&mut self, stmt_start: u32, braces: i64) {
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::RBrace if self.braces <= braces => return,
                TokenKind::Semi => {
                    self.bump();
                    return;
                }
                _ if self.tok.newline_before && self.tok.span.start > stmt_start => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Skips a balanced `{ ... }` group (debug sections, initialisers).
    fn skip_braces(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ----- module level ---------------------------------------------------------------------

    pub fn parse_module(mut self) -> (Module, Vec<Diagnostic>) {
        let mut module = Module::default();
        while !self.at(TokenKind::Eof) {
            let before = self.tok.span.start;
            let reported = self.errors.len();
            if self.module_item(&mut module).is_err() {
                self.recover_item(before);
            }
            if self.tok.span.start == before && !self.at(TokenKind::Eof) {
                // A token nothing accepts: report once and move on.
                if self.errors.len() == reported {
                    self.error_here("a directive");
                }
                self.bump();
            }
        }
        (module, self.errors)
    }

    fn module_item(&mut self, module: &mut Module) -> PResult<()> {
        if self.at(TokenKind::Ident) && self.cur().starts_with("@@") {
            // `@@DWARF ...` debug lines of older nvcc: skip the line.
            self.bump();
            while !self.tok.newline_before && !self.at(TokenKind::Eof) {
                self.bump();
            }
            return Ok(());
        }
        if !self.at(TokenKind::DotIdent) {
            self.error_here("a directive");
            return Err(());
        }
        let start = self.tok.span.start as usize;
        match self.cur() {
            ".version" => {
                self.bump();
                let t = self.bump();
                let text = self.slice(t.span);
                let parsed = text.split_once('.').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                match (t.kind, parsed) {
                    (TokenKind::Float, Some(v)) => module.version = Some(v),
                    _ => {
                        self.errors.push(Diagnostic { span: t.span, message: format!("expected a version like `7.0`, found `{text}`") });
                        return Err(());
                    }
                }
            }
            ".target" => {
                self.bump();
                loop {
                    let t = self.expect_ident("a target name")?;
                    module.targets.push(self.slice(t.span).into());
                    if !self.eat(TokenKind::Comma) {
                        break;
                    }
                }
            }
            ".address_size" => {
                self.bump();
                module.address_size = Some(self.expect_u32("an address size")?);
            }
            ".file" => {
                self.bump();
                let index = self.expect_u32("a file index")?;
                let t = self.expect(TokenKind::Str, "a file name")?;
                let name = unquote(self.slice(t.span));
                // Optional `, timestamp, size`.
                while self.eat(TokenKind::Comma) {
                    self.expect_int("a number")?;
                }
                module.files.push(FileDecl { index, name, span: Span::new(start, self.prev_end) });
            }
            ".section" => {
                self.bump();
                // Debug sections (`.section .debug_info { ... }`) carry nothing we model.
                while !self.at(TokenKind::LBrace) && !self.at(TokenKind::Eof) {
                    self.bump();
                }
                self.skip_braces();
            }
            ".pragma" | ".alias" => {
                self.bump();
                while !self.at(TokenKind::Semi) && !self.at(TokenKind::Eof) {
                    self.bump();
                }
                self.expect(TokenKind::Semi, "`;`")?;
            }
            _ => {
                let linkage = self.linkage();
                match self.cur() {
                    ".entry" | ".func" => {
                        let f = self.function(linkage, start)?;
                        module.functions.push(f);
                    }
                    ".global" | ".shared" | ".const" | ".local" | ".tex" | ".surf" | ".sampler" => {
                        let v = self.var_decl(linkage, start)?;
                        module.variables.push(v);
                    }
                    _ => {
                        self.error_here("a directive");
                        return Err(());
                    }
                }
            }
        }
        Ok(())
    }

    fn linkage(&mut self) -> Option<Linkage> {
        let l = match self.cur() {
            ".visible" => Linkage::Visible,
            ".extern" => Linkage::Extern,
            ".weak" => Linkage::Weak,
            ".common" => Linkage::Common,
            _ => return None,
        };
        if !self.at(TokenKind::DotIdent) {
            return None;
        }
        self.bump();
        Some(l)
    }

    fn function(&mut self, linkage: Option<Linkage>, start: usize) -> PResult<Function> {
        let kind = if self.cur() == ".entry" { FunctionKind::Entry } else { FunctionKind::Func };
        self.bump();
        let mut returns = Vec::new();
        if kind == FunctionKind::Func && self.at(TokenKind::LParen) {
            returns = self.param_list()?;
        }
        let name_tok = self.expect_ident("a function name")?;
        let params = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        let mut directives = Vec::new();
        loop {
            match self.cur() {
                ".maxntid" | ".reqntid" | ".minnctapersm" | ".maxnctapersm" | ".maxnreg" | ".maxclusterrank" | ".reqnctapercluster" | ".explicitcluster"
                | ".noreturn" | ".blocksareclusters"
                    if self.at(TokenKind::DotIdent) =>
                {
                    let d = self.bump();
                    let mut values = Vec::new();
                    if self.at(TokenKind::Int) {
                        values.push(self.expect_int("a number")?);
                        while self.eat(TokenKind::Comma) {
                            values.push(self.expect_int("a number")?);
                        }
                    }
                    directives.push(PerfDirective { name: self.slice(d.span).into(), values, span: Span::new(d.span.start as usize, self.prev_end) });
                }
                ".pragma" if self.at(TokenKind::DotIdent) => {
                    self.bump();
                    while !self.at(TokenKind::Semi) && !self.at(TokenKind::Eof) {
                        self.bump();
                    }
                    self.expect(TokenKind::Semi, "`;`")?;
                }
                _ => break,
            }
        }
        let body = if self.eat(TokenKind::Semi) {
            None
        } else if self.at(TokenKind::LBrace) {
            Some(self.body())
        } else {
            self.error_here("`{` or `;`");
            return Err(());
        };
        Ok(Function {
            kind,
            linkage,
            name: self.slice(name_tok.span).into(),
            name_span: name_tok.span,
            returns,
            params,
            directives,
            body,
            span: Span::new(start, self.prev_end),
        })
    }

    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut params = Vec::new();
        if self.eat(TokenKind::RParen) {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            if self.eat(TokenKind::Comma) {
                continue;
            }
            self.expect(TokenKind::RParen, "`,` or `)`")?;
            return Ok(params);
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.tok.span.start as usize;
        if !(self.at_word(".param") || self.at_word(".reg")) {
            self.error_here("`.param` or `.reg`");
            return Err(());
        }
        let space = self.bump_text().into();
        let mut ty: Option<Name> = None;
        let mut align = None;
        let mut ptr_space = None;
        while self.at(TokenKind::DotIdent) {
            let word = self.cur();
            self.bump();
            match word {
                ".align" => align = Some(self.expect_u32("an alignment")?),
                ".ptr" => {}
                ".global" | ".shared" | ".const" | ".local" => ptr_space = Some(word.into()),
                _ => ty = Some(word.into()),
            }
        }
        let name_tok = self.expect_ident("a parameter name")?;
        let mut array_len = None;
        if self.eat(TokenKind::LBracket) {
            array_len = Some(self.expect_int("an array length")?);
            self.expect(TokenKind::RBracket, "`]`")?;
        }
        let Some(ty) = ty else {
            self.errors.push(Diagnostic { span: name_tok.span, message: "parameter has no type".into() });
            return Err(());
        };
        Ok(Param { space, ty, align, ptr_space, name: self.slice(name_tok.span).into(), array_len, span: Span::new(start, self.prev_end) })
    }

    /// `.global .align 4 .b8 name[16] = {...};` at module or function scope. The state space is
    /// the current token.
    fn var_decl(&mut self, linkage: Option<Linkage>, start: usize) -> PResult<VarDecl> {
        let space: Name = self.cur().into();
        self.bump();
        let mut ty: Option<Name> = None;
        let mut vector = None;
        let mut align = None;
        while self.at(TokenKind::DotIdent) {
            let word = self.cur();
            self.bump();
            match word {
                ".align" => align = Some(self.expect_u32("an alignment")?),
                ".v2" => vector = Some(2),
                ".v4" => vector = Some(4),
                ".v8" => vector = Some(8),
                ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                _ => ty = Some(word.into()),
            }
        }
        let name_tok = self.expect_ident("a variable name")?;
        let mut dims = Vec::new();
        while self.eat(TokenKind::LBracket) {
            if self.eat(TokenKind::RBracket) {
                dims.push(None);
            } else {
                dims.push(Some(self.expect_int("an array length")?));
                self.expect(TokenKind::RBracket, "`]`")?;
            }
        }
        let mut has_initializer = false;
        if self.eat(TokenKind::Eq) {
            has_initializer = true;
            // Initialisers (`{1, 2}`, `generic(x)`, `0f3F800000`) are data we do not model yet.
            while !self.at(TokenKind::Semi) && !self.at(TokenKind::Eof) {
                if self.at(TokenKind::LBrace) {
                    self.skip_braces();
                } else {
                    self.bump();
                }
            }
        }
        self.expect(TokenKind::Semi, "`;`")?;
        let Some(ty) = ty else {
            self.errors.push(Diagnostic { span: name_tok.span, message: "variable has no type".into() });
            return Err(());
        };
        Ok(VarDecl { space, linkage, ty, vector, align, name: self.slice(name_tok.span).into(), dims, has_initializer, span: Span::new(start, self.prev_end) })
    }

    // ----- function bodies ------------------------------------------------------------------

    /// A `{ ... }` body; nested `{ }` scopes (clang's call sequences) are flattened into it.
    fn body(&mut self) -> Vec<Statement> {
        self.bump(); // `{`
        self.loc = None;
        let mut out = Vec::new();
        let mut depth = 1usize;
        loop {
            let before = self.tok.span.start;
            let braces = self.braces;
            match self.tok.kind {
                TokenKind::Eof => {
                    self.error_here("`}`");
                    return out;
                }
                TokenKind::RBrace => {
                    self.bump();
                    depth -= 1;
                    if depth == 0 {
                        return out;
                    }
                }
                TokenKind::LBrace => {
                    self.bump();
                    depth += 1;
                }
                TokenKind::DotIdent if self.at_function_start() => {
                    // The closing brace is missing: end the body here and let the module parse
                    // the next function.
                    self.error_here("`}`");
                    return out;
                }
                _ => {
                    if self.statement(&mut out).is_err() {
                        self.recover(before, braces);
                    }
                }
            }
            if self.tok.span.start == before && !matches!(self.tok.kind, TokenKind::Eof | TokenKind::RBrace) {
                self.bump();
            }
        }
    }

    fn statement(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        let start = self.tok.span.start as usize;
        if self.at(TokenKind::DotIdent) {
            match self.cur() {
                ".reg" => {
                    out.push(Statement::Reg(self.reg_decl(start)?));
                }
                ".loc" => {
                    let line_tok = self.bump();
                    let file = self.expect_u32("a file index")?;
                    let line = self.expect_u32("a line number")?;
                    let col = self.expect_u32("a column number")?;
                    // PTX 7.2+ may add `, function_name ..., inlined_at ...` on the same line.
                    while !self.tok.newline_before && !self.at(TokenKind::Eof) && !self.at(TokenKind::RBrace) {
                        self.bump();
                    }
                    let _ = line_tok;
                    self.loc = Some(SourceLoc { file, line, col });
                }
                ".pragma" => {
                    self.bump();
                    while !self.at(TokenKind::Semi) && !self.at(TokenKind::Eof) {
                        self.bump();
                    }
                    self.expect(TokenKind::Semi, "`;`")?;
                }
                ".global" | ".shared" | ".const" | ".local" | ".param" => {
                    out.push(Statement::Var(self.var_decl(None, start)?));
                }
                ".extern" | ".visible" | ".weak" => {
                    let linkage = self.linkage();
                    out.push(Statement::Var(self.var_decl(linkage, start)?));
                }
                _ => {
                    self.error_here("an instruction or directive");
                    return Err(());
                }
            }
            return Ok(());
        }
        if self.at(TokenKind::Ident) {
            // A label `name:`?
            let t = self.tok;
            let name = self.cur();
            if !name.starts_with('%') {
                self.bump();
                if self.eat(TokenKind::Colon) {
                    out.push(Statement::Label(Label { name: name.into(), span: t.span }));
                    return Ok(());
                }
                return self.instruction_after_opcode(None, t, start, out);
            }
        }
        let guard = if self.eat(TokenKind::At) {
            let negated = self.eat(TokenKind::Bang);
            if !self.cur().starts_with('%') {
                self.error_here("a predicate register");
                return Err(());
            }
            let reg = self.expect_ident("a predicate register")?;
            Some(Guard { negated, reg: self.slice(reg.span).into() })
        } else {
            None
        };
        let op = self.expect_ident("an instruction")?;
        self.instruction_after_opcode(guard, op, start, out)
    }

    fn reg_decl(&mut self, start: usize) -> PResult<RegDecl> {
        self.bump(); // .reg
        let mut ty = None;
        let mut vector = None;
        while self.at(TokenKind::DotIdent) {
            let word = self.cur();
            self.bump();
            match word {
                ".v2" => vector = Some(2),
                ".v4" => vector = Some(4),
                ".v8" => vector = Some(8),
                ".align" => {
                    self.expect_int("an alignment")?;
                }
                _ => ty = Some(word.into()),
            }
        }
        let mut names = Vec::new();
        loop {
            let t = self.expect_ident("a register name")?;
            let mut count = None;
            if self.eat(TokenKind::Lt) {
                count = Some(self.expect_u32("a register count")?);
                self.expect(TokenKind::Gt, "`>`")?;
            }
            names.push(RegName { name: self.slice(t.span).into(), count });
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::Semi, "`;`")?;
        let Some(ty) = ty else {
            self.errors.push(Diagnostic { span: Span::new(start, self.prev_end), message: "register declaration has no type".into() });
            return Err(());
        };
        Ok(RegDecl { ty, vector, names, span: Span::new(start, self.prev_end) })
    }

    fn instruction_after_opcode(&mut self, guard: Option<Guard>, op: Token, start: usize, out: &mut Vec<Statement>) -> PResult<()> {
        let mut modifiers = Vec::new();
        while self.at(TokenKind::DotIdent) {
            modifiers.push(self.bump_text().into());
        }
        let mut operands = Vec::new();
        if !self.at(TokenKind::Semi) {
            loop {
                operands.push(self.operand()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        if !self.at(TokenKind::Semi) {
            self.error_here("`,` or `;`");
            return Err(());
        }
        self.bump();
        out.push(Statement::Instruction(Instruction {
            guard,
            opcode: self.slice(op.span).into(),
            modifiers,
            operands,
            span: Span::new(start, self.prev_end),
            loc: self.loc,
        }));
        Ok(())
    }

    /// Whether the current token is separated from the previous one by whitespace.
    fn tok_separated(&self) -> bool {
        self.tok.span.start as usize != self.prev_end
    }

    fn operand(&mut self) -> PResult<Operand> {
        match self.tok.kind {
            TokenKind::Ident => {
                let t = self.bump();
                let name = self.slice(t.span);
                if name == "_" {
                    return Ok(Operand::Sink);
                }
                if name.starts_with('%') {
                    let mut end = t.span.end as usize;
                    // `%tid.x`, `%v1.y`: a register with a component suffix, written without space.
                    if self.at(TokenKind::DotIdent) && !self.tok_separated() && matches!(self.cur(), ".x" | ".y" | ".z" | ".w" | ".r" | ".g" | ".b" | ".a") {
                        end = self.bump().span.end as usize;
                    }
                    let full: Name = self.text[t.span.start as usize..end].into();
                    if self.eat(TokenKind::Pipe) {
                        let q = self.expect_ident("a predicate register")?;
                        return Ok(Operand::RegPair(full, self.slice(q.span).into()));
                    }
                    return Ok(Operand::Reg(full));
                }
                Ok(Operand::Symbol(name.into()))
            }
            TokenKind::Bang => {
                self.bump();
                let t = self.expect_ident("a predicate register")?;
                Ok(Operand::NotReg(self.slice(t.span).into()))
            }
            TokenKind::Int | TokenKind::Float | TokenKind::Minus => Ok(Operand::Imm(self.immediate()?)),
            TokenKind::LBrace | TokenKind::LParen if self.nesting >= MAX_OPERAND_NESTING => {
                self.error_here("an operand");
                Err(())
            }
            TokenKind::LBrace | TokenKind::LParen => {
                self.nesting += 1;
                let group = self.operand_group();
                self.nesting -= 1;
                group
            }
            TokenKind::LBracket => {
                self.bump();
                let base = match self.tok.kind {
                    TokenKind::Ident => {
                        let t = self.bump();
                        let name = self.slice(t.span);
                        if name.starts_with('%') {
                            AddressBase::Reg(name.into())
                        } else {
                            AddressBase::Symbol(name.into())
                        }
                    }
                    _ => AddressBase::None,
                };
                // `[1024]`, `[%rd+8]`, `[%rd+-8]` and `[%rd-8]` (the minus is part of the number).
                let has_offset = base == AddressBase::None || self.eat(TokenKind::Plus) || self.at(TokenKind::Minus);
                let offset: i64 = if has_offset { self.signed_int()? } else { 0 };
                self.expect(TokenKind::RBracket, "`]`")?;
                Ok(Operand::Address(Address { base, offset }))
            }
            _ => {
                self.error_here("an operand");
                Err(())
            }
        }
    }

    /// `{a, b}` (a vector) or `(a, b)` (a call's list), at the opening bracket.
    fn operand_group(&mut self) -> PResult<Operand> {
        if self.eat(TokenKind::LBrace) {
            let mut elems = Vec::new();
            loop {
                elems.push(self.operand()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RBrace, "`,` or `}`")?;
            return Ok(Operand::Vector(elems));
        }
        self.bump(); // `(`
        let mut elems = Vec::new();
        if !self.at(TokenKind::RParen) {
            loop {
                elems.push(self.operand()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(TokenKind::RParen, "`,` or `)`")?;
        Ok(Operand::List(elems))
    }

    fn signed_int(&mut self) -> PResult<i64> {
        let neg = self.eat(TokenKind::Minus);
        let t = self.expect(TokenKind::Int, "an integer offset")?;
        let limit = if neg { i64::MAX as i128 + 1 } else { i64::MAX as i128 };
        let v = parse_int(self.slice(t.span)).filter(|v| *v <= limit);
        let Some(v) = v else {
            self.errors.push(Diagnostic { span: t.span, message: "offset out of range".into() });
            return Err(());
        };
        Ok(if neg { (-v) as i64 } else { v as i64 })
    }

    fn immediate(&mut self) -> PResult<Immediate> {
        let neg = self.eat(TokenKind::Minus);
        let t = self.bump();
        let text = self.slice(t.span);
        let imm = match t.kind {
            TokenKind::Int => parse_int(text).map(|v| Immediate::Int(if neg { -v } else { v })),
            TokenKind::Float => parse_float(text).map(|f| if neg { negate(f) } else { f }),
            _ => None,
        };
        match imm {
            Some(i) => Ok(i),
            None if t.kind == TokenKind::Int && int_overflows(text) => {
                self.errors.push(Diagnostic { span: t.span, message: "integer out of range".into() });
                Err(())
            }
            None => {
                self.errors.push(Diagnostic { span: t.span, message: format!("expected a number, found `{text}`") });
                Err(())
            }
        }
    }
}

fn negate(f: Immediate) -> Immediate {
    match f {
        Immediate::F32(b) => Immediate::F32(b ^ 0x8000_0000),
        Immediate::F64(b) => Immediate::F64(b ^ 0x8000_0000_0000_0000),
        Immediate::Decimal(d) => Immediate::Decimal(-d),
        Immediate::Int(i) => Immediate::Int(-i),
    }
}

/// Decimal, hex (`0x1F`), octal (`017`) and binary (`0b101`) integers with an optional `U`.
pub fn parse_int(text: &str) -> Option<i128> {
    let (digits, radix) = int_digits(text);
    if digits.is_empty() {
        return None;
    }
    i128::from_str_radix(digits, radix).ok()
}

fn int_digits(text: &str) -> (&str, u32) {
    let t = text.strip_suffix('U').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    }
}

/// Whether a well-formed integer literal is too large for `parse_int`.
fn int_overflows(text: &str) -> bool {
    let (digits, radix) = int_digits(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) && parse_int(text).is_none()
}

/// Directives that start a module-level item: where recovery from a broken item stops.
fn is_module_directive(word: &str) -> bool {
    matches!(
        word,
        ".version"
            | ".target"
            | ".address_size"
            | ".file"
            | ".section"
            | ".pragma"
            | ".alias"
            | ".visible"
            | ".extern"
            | ".weak"
            | ".common"
            | ".entry"
            | ".func"
            | ".global"
            | ".shared"
            | ".const"
            | ".local"
            | ".tex"
            | ".surf"
            | ".sampler"
    )
}

fn parse_float(text: &str) -> Option<Immediate> {
    let bytes = text.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        match bytes[1] {
            b'f' | b'F' if text.len() == 10 => return u32::from_str_radix(&text[2..], 16).ok().map(Immediate::F32),
            b'd' | b'D' if text.len() == 18 => return u64::from_str_radix(&text[2..], 16).ok().map(Immediate::F64),
            b'f' | b'F' | b'd' | b'D' => return None,
            _ => {}
        }
    }
    text.parse::<f64>().ok().map(Immediate::Decimal)
}

fn unquote(s: &str) -> String {
    let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(s);
    inner.replace("\\\\", "\\").replace("\\\"", "\"")
}
