//! The unified diff of two texts as the `difflib` package that apimachinery's `diff.Diff` uses
//! writes it (a port of Python's `difflib`): lines matched by the Ratcliff/Obershelp
//! `SequenceMatcher` (longest matching blocks first, with its "popular line" heuristic for
//! texts of 200 lines or more), hunks with three lines of context, and no file header lines.
//! kube-apiserver shows such a diff of two Pod specs when an update changes what may not change.

use std::collections::HashMap;

/// One matching block: `a[i..i + size] == b[j..j + size]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Block {
    i: usize,
    j: usize,
    size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpCode {
    tag: Tag,
    i1: usize,
    i2: usize,
    j1: usize,
    j2: usize,
}

struct Matcher<'a> {
    a: &'a [&'a str],
    b: &'a [&'a str],
    /// Where each line of `b` occurs, popular lines left out.
    b2j: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Matcher<'a> {
    fn new(a: &'a [&'a str], b: &'a [&'a str]) -> Self {
        let mut b2j: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, line) in b.iter().enumerate() {
            b2j.entry(line).or_default().push(j);
        }
        // The autojunk heuristic: in a text of 200 lines or more, a line that occurs more than
        // 1% + 1 times is not used to start a match.
        if b.len() >= 200 {
            let limit = b.len() / 100 + 1;
            b2j.retain(|_, at| at.len() <= limit);
        }
        Self { a, b, b2j }
    }

    fn longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Block {
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for i in alo..ahi {
            let mut next: HashMap<usize, usize> = HashMap::new();
            if let Some(at) = self.b2j.get(self.a[i]) {
                for &j in at {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = j
                        .checked_sub(1)
                        .and_then(|p| j2len.get(&p))
                        .copied()
                        .unwrap_or(0)
                        + 1;
                    next.insert(j, k);
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            j2len = next;
        }
        // Extend over equal lines the index left out (the popular ones).
        while besti > alo && bestj > blo && self.a[besti - 1] == self.b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && self.a[besti + bestsize] == self.b[bestj + bestsize]
        {
            bestsize += 1;
        }
        Block {
            i: besti,
            j: bestj,
            size: bestsize,
        }
    }

    fn matching_blocks(&self) -> Vec<Block> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut queue = vec![(0, la, 0, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.longest_match(alo, ahi, blo, bhi);
            if m.size > 0 {
                blocks.push(m);
                if alo < m.i && blo < m.j {
                    queue.push((alo, m.i, blo, m.j));
                }
                if m.i + m.size < ahi && m.j + m.size < bhi {
                    queue.push((m.i + m.size, ahi, m.j + m.size, bhi));
                }
            }
        }
        blocks.sort();
        let mut merged: Vec<Block> = Vec::new();
        for b in blocks {
            match merged.last_mut() {
                Some(last) if last.i + last.size == b.i && last.j + last.size == b.j => {
                    last.size += b.size;
                }
                _ => merged.push(b),
            }
        }
        merged.push(Block {
            i: la,
            j: lb,
            size: 0,
        });
        merged
    }

    fn opcodes(&self) -> Vec<OpCode> {
        let (mut i, mut j) = (0, 0);
        let mut codes = Vec::new();
        for b in self.matching_blocks() {
            let tag = match (i < b.i, j < b.j) {
                (true, true) => Some(Tag::Replace),
                (true, false) => Some(Tag::Delete),
                (false, true) => Some(Tag::Insert),
                (false, false) => None,
            };
            if let Some(tag) = tag {
                codes.push(OpCode {
                    tag,
                    i1: i,
                    i2: b.i,
                    j1: j,
                    j2: b.j,
                });
            }
            i = b.i + b.size;
            j = b.j + b.size;
            if b.size > 0 {
                codes.push(OpCode {
                    tag: Tag::Equal,
                    i1: b.i,
                    i2: i,
                    j1: b.j,
                    j2: j,
                });
            }
        }
        codes
    }

    fn grouped_opcodes(&self, n: usize) -> Vec<Vec<OpCode>> {
        let mut codes = self.opcodes();
        if codes.is_empty() {
            codes.push(OpCode {
                tag: Tag::Equal,
                i1: 0,
                i2: 1,
                j1: 0,
                j2: 1,
            });
        }
        if let Some(first) = codes.first_mut()
            && first.tag == Tag::Equal
        {
            first.i1 = first.i1.max(first.i2.saturating_sub(n));
            first.j1 = first.j1.max(first.j2.saturating_sub(n));
        }
        if let Some(last) = codes.last_mut()
            && last.tag == Tag::Equal
        {
            last.i2 = last.i2.min(last.i1 + n);
            last.j2 = last.j2.min(last.j1 + n);
        }
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for mut c in codes {
            if c.tag == Tag::Equal && c.i2 - c.i1 > 2 * n {
                group.push(OpCode {
                    i2: c.i2.min(c.i1 + n),
                    j2: c.j2.min(c.j1 + n),
                    ..c
                });
                groups.push(std::mem::take(&mut group));
                c.i1 = c.i1.max(c.i2.saturating_sub(n));
                c.j1 = c.j1.max(c.j2.saturating_sub(n));
            }
            group.push(c);
        }
        let only_equal = group.len() == 1 && group[0].tag == Tag::Equal;
        if !group.is_empty() && !only_equal {
            groups.push(group);
        }
        groups
    }
}

/// A hunk range: `start,length`, just `start` for one line.
fn range(start: usize, stop: usize) -> String {
    let length = stop - start;
    match length {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{length}", start + 1),
    }
}

/// Splits a text into lines that keep their `\n` (the last one gets one), as `SplitLines`.
fn lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    match out.last_mut() {
        Some(last) if !last.ends_with('\n') => last.push('\n'),
        Some(_) => out.push("\n".to_owned()),
        None => out.push("\n".to_owned()),
    }
    out
}

/// The unified diff of `a` and `b` with `context` lines around each change; empty when they are
/// equal.
pub(crate) fn unified_diff(a: &str, b: &str, context: usize) -> String {
    let (a, b) = (lines(a), lines(b));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    let matcher = Matcher::new(&a, &b);
    let mut out = String::new();
    for group in matcher.grouped_opcodes(context) {
        let (first, last) = (group[0], group[group.len() - 1]);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first.i1, last.i2),
            range(first.j1, last.j2)
        ));
        for c in group {
            if c.tag == Tag::Equal {
                for line in &a[c.i1..c.i2] {
                    out.push(' ');
                    out.push_str(line);
                }
                continue;
            }
            if matches!(c.tag, Tag::Replace | Tag::Delete) {
                for line in &a[c.i1..c.i2] {
                    out.push('-');
                    out.push_str(line);
                }
            }
            if matches!(c.tag, Tag::Replace | Tag::Insert) {
                for line in &b[c.j1..c.j2] {
                    out.push('+');
                    out.push_str(line);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_should_show_with_three_lines_of_context() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n9";
        let b = "1\n2\n3\n4\nfive\n6\n7\n8\n9";
        assert_eq!(
            unified_diff(a, b, 3),
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!(unified_diff(a, a, 3), "");
    }

    #[test]
    fn distant_changes_should_make_separate_hunks_and_insertions_count_lines() {
        let a: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        let mut b = a.clone();
        b[1] = "two".into();
        b.splice(18..18, ["x".to_owned(), "y".to_owned()]);
        let diff = unified_diff(&a.join("\n"), &b.join("\n"), 3);
        assert_eq!(
            diff,
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,7 @@\n 16\n 17\n 18\n+x\n+y\n 19\n 20\n"
        );
    }
}
