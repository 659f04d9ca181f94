//! The control-flow graph of a decoded kernel: basic blocks, dominators and natural loops.

use crate::decode::Item;
use crate::ops::{Inst, Op, RegId};
use ptx::{Name, Span};
use std::collections::HashMap;

pub type BlockId = u32;
pub type LoopId = u32;

#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Goto(BlockId),
    /// `@%p bra taken` (or `@!%p`), falling through to `fallthrough` otherwise.
    Branch {
        cond: RegId,
        negated: bool,
        taken: BlockId,
        fallthrough: BlockId,
    },
    /// `ret` or `exit`, or falling off the end of the body.
    Return,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub label: Option<Name>,
    /// The block's instructions without its terminating branch.
    pub insts: Vec<Inst>,
    pub term: Term,
    /// Span of the terminator instruction, if it was written.
    pub term_span: Option<Span>,
    pub term_line: Option<u32>,
}

impl Block {
    pub fn successors(&self) -> Vec<BlockId> {
        match self.term {
            Term::Goto(b) => vec![b],
            Term::Branch { taken, fallthrough, .. } if taken == fallthrough => vec![taken],
            Term::Branch { taken, fallthrough, .. } => vec![taken, fallthrough],
            Term::Return => vec![],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub header: BlockId,
    /// Membership by block id.
    pub blocks: Vec<bool>,
    /// Blocks with a back edge to the header.
    pub latches: Vec<BlockId>,
    /// Edges leaving the loop.
    pub exits: Vec<(BlockId, BlockId)>,
    pub parent: Option<LoopId>,
    pub depth: u32,
}

impl Loop {
    pub fn contains(&self, b: BlockId) -> bool {
        self.blocks[b as usize]
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    pub entry: BlockId,
    pub preds: Vec<Vec<BlockId>>,
    /// Reverse post-order of the reachable blocks.
    pub rpo: Vec<BlockId>,
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<LoopId>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfgError {
    pub message: String,
    pub span: Span,
}

impl Cfg {
    pub fn build(items: &[Item]) -> Result<Cfg, CfgError> {
        let blocks = split_blocks(items)?;
        let n = blocks.len();
        let mut preds = vec![Vec::new(); n];
        for (i, b) in blocks.iter().enumerate() {
            for s in b.successors() {
                preds[s as usize].push(i as BlockId);
            }
        }
        let rpo = reverse_post_order(&blocks, 0);
        let idom = dominators(&rpo, &preds, n);
        let mut cfg = Cfg { blocks, entry: 0, preds, rpo, loops: Vec::new(), loop_of: vec![None; n] };
        cfg.find_loops(&idom)?;
        Ok(cfg)
    }

    /// Loops enclosing a block, outermost first.
    pub fn loop_nest(&self, b: BlockId) -> Vec<LoopId> {
        let mut out = Vec::new();
        let mut cur = self.loop_of[b as usize];
        while let Some(l) = cur {
            out.push(l);
            cur = self.loops[l as usize].parent;
        }
        out.reverse();
        out
    }

    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> Option<LoopId> {
        self.loops.iter().position(|l| l.header == to && l.latches.contains(&from)).map(|l| l as LoopId)
    }

    fn find_loops(&mut self, idom: &[Option<BlockId>]) -> Result<(), CfgError> {
        let n = self.blocks.len();
        let dominates = |a: BlockId, mut b: BlockId| loop {
            if a == b {
                return true;
            }
            match idom[b as usize] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        };
        let order: HashMap<BlockId, usize> = self.rpo.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut by_header: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
        for &u in &self.rpo {
            for v in self.blocks[u as usize].successors() {
                if order[&v] <= order[&u] {
                    if !dominates(v, u) {
                        return Err(CfgError {
                            message: "irreducible control flow (a loop with two entries) is not supported".into(),
                            span: self.blocks[u as usize].term_span.unwrap_or_default(),
                        });
                    }
                    by_header.entry(v).or_default().push(u);
                }
            }
        }
        let mut headers: Vec<BlockId> = by_header.keys().copied().collect();
        headers.sort_by_key(|h| order[h]);
        for h in headers {
            let latches = by_header[&h].clone();
            let mut blocks = vec![false; n];
            blocks[h as usize] = true;
            let mut stack: Vec<BlockId> = latches.clone();
            while let Some(b) = stack.pop() {
                if !blocks[b as usize] {
                    blocks[b as usize] = true;
                    stack.extend(self.preds[b as usize].iter().copied().filter(|p| order.contains_key(p)));
                }
            }
            let mut exits = Vec::new();
            for (b, inside) in blocks.iter().enumerate() {
                if *inside {
                    for s in self.blocks[b].successors() {
                        if !blocks[s as usize] {
                            exits.push((b as BlockId, s));
                        }
                    }
                }
            }
            self.loops.push(Loop { header: h, blocks, latches, exits, parent: None, depth: 0 });
        }
        // Nesting: a loop's parent is the smallest other loop containing its header.
        let sizes: Vec<usize> = self.loops.iter().map(|l| l.blocks.iter().filter(|b| **b).count()).collect();
        for i in 0..self.loops.len() {
            let h = self.loops[i].header;
            let parent = (0..self.loops.len()).filter(|&j| j != i && self.loops[j].contains(h) && sizes[j] > sizes[i]).min_by_key(|&j| sizes[j]);
            self.loops[i].parent = parent.map(|p| p as LoopId);
        }
        for i in 0..self.loops.len() {
            let mut d = 0;
            let mut cur = self.loops[i].parent;
            while let Some(p) = cur {
                d += 1;
                cur = self.loops[p as usize].parent;
            }
            self.loops[i].depth = d;
        }
        for b in 0..n {
            self.loop_of[b] = (0..self.loops.len()).filter(|&l| self.loops[l].blocks[b]).max_by_key(|&l| self.loops[l].depth).map(|l| l as LoopId);
        }
        Ok(())
    }
}

fn split_blocks(items: &[Item]) -> Result<Vec<Block>, CfgError> {
    // First pass: block boundaries and label → block numbers.
    struct Raw<'a> {
        label: Option<Name>,
        insts: Vec<&'a Inst>,
    }
    let mut raws: Vec<Raw> = vec![Raw { label: None, insts: Vec::new() }];
    let mut labels: HashMap<Name, BlockId> = HashMap::new();
    for item in items {
        match item {
            Item::Label(name, span) => {
                if !raws.last().is_some_and(|r| r.insts.is_empty()) {
                    raws.push(Raw { label: None, insts: Vec::new() });
                }
                // Several labels on one spot all name the same block.
                raws.last_mut().unwrap().label.get_or_insert_with(|| name.clone());
                if labels.insert(name.clone(), raws.len() as BlockId - 1).is_some() {
                    return Err(CfgError { message: format!("label `{name}` is defined twice"), span: *span });
                }
            }
            Item::Inst(inst) => {
                raws.last_mut().unwrap().insts.push(inst);
                if matches!(inst.op, Op::Bra { .. } | Op::Ret | Op::Exit) {
                    raws.push(Raw { label: None, insts: Vec::new() });
                }
            }
        }
    }
    // Second pass: terminators.
    let count = raws.len();
    let mut blocks = Vec::with_capacity(count + 1);
    let mut return_block: Option<BlockId> = None;
    let mut need_return_block = false;
    for (i, raw) in raws.into_iter().enumerate() {
        let next = (i + 1 < count).then_some(i as BlockId + 1);
        let mut insts: Vec<Inst> = raw.insts.into_iter().cloned().collect();
        let (term, term_span, term_line) = match insts.last().map(|x| x.op.clone()) {
            Some(Op::Bra { target }) => {
                let last = insts.pop().unwrap();
                let Some(&t) = labels.get(&target) else {
                    return Err(CfgError { message: format!("branch to undefined label `{target}`"), span: last.span });
                };
                let term = match last.guard {
                    None => Term::Goto(t),
                    Some((cond, negated)) => {
                        let fall = next.unwrap_or_else(|| {
                            need_return_block = true;
                            count as BlockId
                        });
                        Term::Branch { cond, negated, taken: t, fallthrough: fall }
                    }
                };
                (term, Some(last.span), last.line)
            }
            Some(Op::Ret | Op::Exit) => {
                let last = insts.pop().unwrap();
                let term = match last.guard {
                    None => Term::Return,
                    Some((cond, negated)) => {
                        need_return_block = true;
                        let ret = *return_block.get_or_insert(count as BlockId);
                        let fall = next.unwrap_or(ret);
                        Term::Branch { cond, negated, taken: ret, fallthrough: fall }
                    }
                };
                (term, Some(last.span), last.line)
            }
            _ => match next {
                Some(n) => (Term::Goto(n), None, None),
                None => (Term::Return, None, None),
            },
        };
        blocks.push(Block { label: raw.label, insts, term, term_span, term_line });
    }
    if need_return_block {
        blocks.push(Block { label: None, insts: Vec::new(), term: Term::Return, term_span: None, term_line: None });
    }
    Ok(blocks)
}

fn reverse_post_order(blocks: &[Block], entry: BlockId) -> Vec<BlockId> {
    let mut visited = vec![false; blocks.len()];
    let mut post = Vec::new();
    // Iterative DFS: (block, next successor index).
    let mut stack = vec![(entry, 0usize)];
    visited[entry as usize] = true;
    while let Some((b, i)) = stack.pop() {
        let succ = blocks[b as usize].successors();
        if i < succ.len() {
            stack.push((b, i + 1));
            let s = succ[i];
            if !visited[s as usize] {
                visited[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Immediate dominators (Cooper, Harvey, Kennedy), `None` for unreachable blocks.
fn dominators(rpo: &[BlockId], preds: &[Vec<BlockId>], n: usize) -> Vec<Option<BlockId>> {
    let mut order = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        order[b as usize] = i;
    }
    let mut idom: Vec<Option<BlockId>> = vec![None; n];
    let Some(&entry) = rpo.first() else { return idom };
    idom[entry as usize] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo[1..] {
            let mut new: Option<BlockId> = None;
            for &p in &preds[b as usize] {
                if idom[p as usize].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while order[a as usize] > order[c as usize] {
                                a = idom[a as usize].unwrap();
                            }
                            while order[c as usize] > order[a as usize] {
                                c = idom[c as usize].unwrap();
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b as usize] != new {
                idom[b as usize] = new;
                changed = true;
            }
        }
    }
    idom
}
