//! An HTML page as structured Markdown: the main content only (navigation, headers, footers and
//! scripts dropped), headings kept with their anchors (`## Title {#id}`, so a hit can cite
//! `URL#id`), code blocks fenced with their language, tables as pipe tables, lists as lists.
//! Also what the crawler needs from the whole document: links, canonical URL, robots meta.
//!
//! Written over scraper's tree rather than with a generic converter because the anchors of
//! headings (on the heading, its section or a child link, depending on the site generator)
//! are what citations need, and generic converters drop them.

use scraper::{ElementRef, Html, Node, Selector};
use std::time::{Duration, Instant};

/// What a page says.
#[derive(Debug, Default)]
pub struct Extracted {
    pub title: String,
    /// `<link rel="canonical">`, as written.
    pub canonical: Option<String>,
    /// Every `<a href>` of the document, as written (navigation included: the crawl needs it).
    pub links: Vec<String>,
    /// `<meta name="robots">` says noindex / nofollow.
    pub noindex: bool,
    pub nofollow: bool,
    pub markdown: String,
    /// Why only the page's start was read (its nesting or its parse passed a bound).
    pub cut: Option<String>,
}

const SKIP: &[&str] = &[
    "script", "style", "noscript", "nav", "header", "footer", "aside", "form", "button", "svg", "template", "iframe",
    "select", "input", "textarea", "head", "title", "link", "meta",
];

const BLOCK: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "details",
    "summary",
    "hr",
    "address",
    "center",
    "body",
    "html",
    "li",
];

/// Element levels the structured walk takes (real pages nest a few dozen deep).
const MAX_NESTING: usize = 256;

/// How deep nodes nest under `root`, counted without recursion.
fn nesting(root: ElementRef) -> usize {
    let top = *root;
    let (mut node, mut depth, mut deepest) = (top, 0usize, 0usize);
    loop {
        if let Some(child) = node.first_child() {
            node = child;
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if node == top {
                return deepest;
            }
            if let Some(next) = node.next_sibling() {
                node = next;
                break;
            }
            match node.parent() {
                Some(p) => {
                    node = p;
                    depth -= 1;
                }
                None => return deepest,
            }
        }
    }
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("static selector")
}

/// How long one page's parse may take: html5ever's tree builder is quadratic on some
/// mis-nested input, and what the pre-scan (`bound`) lets through is fed to it in pieces
/// against this deadline.
pub const PARSE_DEADLINE: Duration = Duration::from_secs(5);
/// Element levels a page may open before it is cut there.
const MAX_DEPTH: usize = 512;
/// End tags closing no open element (each makes the parser search its open elements).
const MAX_STRAY_END_TAGS: usize = 5000;
/// Formatting elements (`<b>`, `<font>`…) closed by another element's end: the parser
/// re-opens all of them at the next text, so their number squares.
const MAX_UNCLOSED_FORMATTING: usize = 1000;
/// What the parser is fed at a time between looks at the clock.
const CHUNK: usize = 16 * 1024;

const VOID: &[&str] =
    &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"];
const RAW_TEXT: &[&str] =
    &["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"];
const FORMATTING: &[&str] =
    &["a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"];

/// Start tags that close an open `<p>` (in button scope).
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "header",
    "hgroup",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "search",
    "section",
    "summary",
    "ul",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "listing",
    "form",
    "table",
    "hr",
    "xmp",
];
/// Where the parser's search for an element to close implicitly stops.
const SCOPE: &[&str] = &["html", "table", "td", "th", "caption", "button", "object", "marquee", "applet", "template"];
const SPECIAL: &[&str] = &[
    "html",
    "body",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "caption",
    "ul",
    "ol",
    "dl",
    "li",
    "dd",
    "dt",
    "section",
    "article",
    "aside",
    "nav",
    "main",
    "header",
    "footer",
    "blockquote",
    "select",
    "button",
    "fieldset",
    "form",
    "figure",
    "details",
];

/// Pops the nearest open element named in `names`, unless an element of `stops` is nearer
/// (the parser's implied end tags, roughly); returns how many formatting elements that closed.
fn close_open(stack: &mut Vec<String>, names: &[&str], stops: &[&str]) -> usize {
    for p in (0..stack.len()).rev() {
        let n = stack[p].as_str();
        if names.contains(&n) {
            let formatting = stack[p + 1..].iter().filter(|o| FORMATTING.contains(&o.as_str())).count();
            stack.truncate(p);
            return formatting;
        }
        if stops.contains(&n) {
            return 0;
        }
    }
    0
}

/// Where to cut a page before parsing, and why: one linear pass over its tags keeping a stack
/// of open elements (as the parser would, roughly: the common implied end tags are applied)
/// that stops at the first tag past a bound. None: the whole page.
fn bound(html: &str) -> Option<(usize, String)> {
    let b = html.as_bytes();
    let mut stack: Vec<String> = Vec::new();
    let (mut stray, mut unclosed) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = b.get(i..).and_then(|r| r.iter().position(|&c| c == b'<')) {
        let at = i + off;
        i = at + 1;
        let rest = &b[at..];
        if rest.starts_with(b"<!--") {
            i = find(b, at + 4, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            i = find(b, at, b">").map_or(b.len(), |e| e + 1);
            continue;
        }
        let end_tag = rest.get(1) == Some(&b'/');
        let name_at = at + 1 + end_tag as usize;
        let name_len = b[name_at..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        if name_len == 0 || !b[name_at].is_ascii_alphabetic() {
            continue;
        }
        let name = html[name_at..name_at + name_len].to_ascii_lowercase();
        let close = tag_end(b, name_at + name_len);
        i = close;
        let n = name.as_str();
        if end_tag {
            match stack.iter().rposition(|o| *o == name) {
                Some(p) => {
                    unclosed += stack[p + 1..].iter().filter(|o| FORMATTING.contains(&o.as_str())).count();
                    stack.truncate(p);
                }
                None => stray += 1,
            }
        } else {
            if CLOSES_P.contains(&n) {
                unclosed += close_open(&mut stack, &["p"], SCOPE);
            }
            unclosed += match n {
                "li" => close_open(&mut stack, &["li"], SPECIAL),
                "dt" | "dd" => close_open(&mut stack, &["dt", "dd"], SPECIAL),
                "td" | "th" => close_open(&mut stack, &["td", "th"], &["tr", "table"]),
                "tr" => close_open(&mut stack, &["tr"], &["table"]),
                "option" => close_open(&mut stack, &["option"], SPECIAL),
                _ => 0,
            };
            if RAW_TEXT.contains(&n) {
                // Its text is not markup: on to its end tag.
                i = find_ignore_case(b, close, format!("</{n}").as_bytes()).unwrap_or(b.len());
                continue;
            }
            if !VOID.contains(&n) && !b[..close].ends_with(b"/>") {
                stack.push(name);
            }
        }
        let why = if stack.len() > MAX_DEPTH {
            format!("elements nested deeper than {MAX_DEPTH}")
        } else if stray > MAX_STRAY_END_TAGS {
            format!("more than {MAX_STRAY_END_TAGS} end tags that close nothing")
        } else if unclosed > MAX_UNCLOSED_FORMATTING {
            format!("more than {MAX_UNCLOSED_FORMATTING} formatting elements left open")
        } else {
            continue;
        };
        return Some((at, why));
    }
    None
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(pat.len()).position(|w| w == pat).map(|p| from + p)
}

fn find_ignore_case(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(pat.len()).position(|w| w.eq_ignore_ascii_case(pat)).map(|p| from + p)
}

/// Just past a tag's `>`, quoted attribute values skipped.
fn tag_end(b: &[u8], mut i: usize) -> usize {
    let mut quote = None;
    while i < b.len() {
        match (quote, b[i]) {
            (None, b'>') => return i + 1,
            (None, q @ (b'"' | b'\'')) => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The document, fed to the parser in pieces until the deadline; with where it stopped when
/// the deadline came first.
fn parse(html: &str, deadline: Instant) -> (Html, Option<usize>) {
    use html5ever::tendril::TendrilSink;
    let mut parser =
        html5ever::driver::parse_document(scraper::HtmlTreeSink::new(Html::new_document()), Default::default());
    let mut at = 0;
    while at < html.len() {
        if Instant::now() >= deadline {
            return (parser.finish(), Some(at));
        }
        let mut end = (at + CHUNK).min(html.len());
        while !html.is_char_boundary(end) {
            end += 1;
        }
        parser.process(html[at..end].into());
        at = end;
    }
    (parser.finish(), None)
}

pub fn extract(html: &str) -> Extracted {
    extract_within(html, PARSE_DEADLINE)
}

/// `extract`, the parse given `limit`: a page whose tags pass a bound is read up to there, a
/// parse still running at the deadline ends with what it has; `cut` says so.
pub fn extract_within(html: &str, limit: Duration) -> Extracted {
    let deadline = Instant::now() + limit;
    let (html, mut cut) = match bound(html) {
        Some((at, why)) => (&html[..at], Some(format!("read up to byte {at} of {}: {why}", html.len()))),
        None => (html, None),
    };
    let (doc, stopped) = parse(html, deadline);
    if let Some(at) = stopped {
        cut =
            Some(format!("read up to byte {at} of {}: parsing took longer than {} s", html.len(), limit.as_secs_f64()));
    }
    let mut out = Extracted {
        title: doc.select(&sel("title")).next().map(|t| collapse(&t.text().collect::<String>())).unwrap_or_default(),
        cut,
        ..Default::default()
    };
    out.canonical = doc
        .select(&sel("link[rel~=canonical]"))
        .find_map(|l| l.value().attr("href"))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    for m in doc.select(&sel("meta[name]")) {
        if m.value().attr("name").is_some_and(|n| n.eq_ignore_ascii_case("robots")) {
            let c = m.value().attr("content").unwrap_or("").to_ascii_lowercase();
            out.noindex |= c.contains("noindex") || c.contains("none");
            out.nofollow |= c.contains("nofollow") || c.contains("none");
        }
    }
    out.links = doc
        .select(&sel("a[href]"))
        .filter_map(|a| a.value().attr("href"))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect();
    // The main content when the page marks it, else the body.
    let root = ["main", "article", "[role=main]", "#content", "body"]
        .iter()
        .find_map(|s| doc.select(&sel(s)).next())
        .unwrap_or_else(|| doc.root_element());
    if nesting(root) > MAX_NESTING {
        // The structured walk recurses per element level: a page nested this deep keeps its
        // text, as one paragraph per text node, without headings or tables.
        let lines: Vec<String> = root.text().map(collapse).filter(|t| !t.is_empty()).collect();
        out.markdown = format!("{}\n", lines.join("\n\n"));
    } else {
        let mut w = Writer::default();
        children(root, &mut w);
        out.markdown = w.finish();
    }
    if out.title.is_empty() {
        out.title = doc.select(&sel("h1")).next().map(|h| inline(h)).unwrap_or_default();
    }
    out
}

#[derive(Default)]
struct Writer {
    blocks: Vec<String>,
    para: String,
}

impl Writer {
    fn text(&mut self, t: &str) {
        if t.chars().all(char::is_whitespace) {
            if !t.is_empty() && !self.para.is_empty() && !self.para.ends_with([' ', '\n']) {
                self.para.push(' ');
            }
            return;
        }
        let starts_ws = t.starts_with(char::is_whitespace);
        if starts_ws && !self.para.is_empty() && !self.para.ends_with([' ', '\n']) {
            self.para.push(' ');
        }
        self.para.push_str(&collapse(t));
        if t.ends_with(char::is_whitespace) {
            self.para.push(' ');
        }
    }

    fn flush(&mut self) {
        let p = self.para.trim();
        if !p.is_empty() {
            let p = p.lines().map(str::trim).collect::<Vec<_>>().join("\n");
            self.blocks.push(p);
        }
        self.para.clear();
    }

    fn block(&mut self, b: String) {
        self.flush();
        if !b.trim().is_empty() {
            self.blocks.push(b);
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        let mut s = self.blocks.join("\n\n");
        s.push('\n');
        s
    }
}

fn collapse(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn children(el: ElementRef, w: &mut Writer) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => w.text(t),
            Node::Element(_) => {
                if let Some(e) = ElementRef::wrap(child) {
                    element(e, w);
                }
            }
            _ => {}
        }
    }
}

fn hidden(e: &ElementRef) -> bool {
    let v = e.value();
    v.attr("hidden").is_some()
        || v.attr("aria-hidden") == Some("true")
        || v.attr("style").is_some_and(|s| s.replace(' ', "").contains("display:none"))
}

fn element(e: ElementRef, w: &mut Writer) {
    let name = e.value().name();
    if SKIP.contains(&name) || hidden(&e) {
        return;
    }
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            let level = (name.as_bytes()[1] - b'0') as usize;
            let title = inline(e);
            if !title.is_empty() {
                let anchor = heading_anchor(&e).map(|a| format!(" {{#{a}}}")).unwrap_or_default();
                w.block(format!("{} {title}{anchor}", "#".repeat(level)));
            }
        }
        "pre" => {
            let code: String = e.text().collect();
            let lang = code_language(&e).unwrap_or_default();
            let fence = if code.contains("```") { "~~~~" } else { "```" };
            w.block(format!("{fence}{lang}\n{}\n{fence}", code.trim_end_matches('\n')));
        }
        "table" => w.block(table(e)),
        "ul" | "ol" => w.block(list(e, name == "ol")),
        "blockquote" => {
            let mut sub = Writer::default();
            children(e, &mut sub);
            let body = sub.finish();
            w.block(
                body.trim_end()
                    .lines()
                    .map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") })
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        "br" => w.para.push('\n'),
        "code" | "kbd" | "samp" => {
            let t = collapse(&e.text().collect::<String>());
            if !t.is_empty() {
                if !w.para.is_empty() && !w.para.ends_with([' ', '\n', '(']) {
                    w.para.push(' ');
                }
                w.para.push_str(&format!("`{t}`"));
            }
        }
        "img" => {}
        _ if BLOCK.contains(&name) => {
            w.flush();
            children(e, w);
            w.flush();
        }
        _ => children(e, w),
    }
}

/// Text of an element on one line (headings, table cells), without permalink marks.
fn inline(e: ElementRef) -> String {
    let mut s = String::new();
    fn walk(e: ElementRef, s: &mut String) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => {
                    s.push_str(t);
                }
                Node::Element(_) => {
                    let Some(c) = ElementRef::wrap(child) else { continue };
                    if SKIP.contains(&c.value().name()) || hidden(&c) || permalink(&c) {
                        continue;
                    }
                    if c.value().name() == "br" {
                        s.push(' ');
                    }
                    walk(c, s);
                }
                _ => {}
            }
        }
    }
    walk(e, &mut s);
    collapse(&s)
}

/// A heading's own permalink (`¶`, `#`, an empty link to its own anchor).
fn permalink(e: &ElementRef) -> bool {
    e.value().name() == "a"
        && e.value().attr("href").is_some_and(|h| h.starts_with('#'))
        && e.text().collect::<String>().trim().chars().filter(|c| !c.is_whitespace() && *c != '\u{200b}').count() <= 1
}

/// Where a heading's anchor is: its own id, a child anchor's, or (Sphinx) its section's.
fn heading_anchor(e: &ElementRef) -> Option<String> {
    let clean = |s: &str| -> Option<String> {
        let s = s.trim();
        (!s.is_empty() && s.len() <= 200 && !s.contains(char::is_whitespace)).then(|| s.to_string())
    };
    if let Some(id) = e.value().attr("id").and_then(clean) {
        return Some(id);
    }
    for d in e.descendants().filter_map(ElementRef::wrap) {
        if let Some(id) = d
            .value()
            .attr("id")
            .or_else(|| (d.value().name() == "a").then(|| d.value().attr("name")).flatten())
            .and_then(clean)
        {
            return Some(id);
        }
        if permalink(&d)
            && let Some(h) = d.value().attr("href").and_then(|h| h.strip_prefix('#')).and_then(clean)
        {
            return Some(h);
        }
    }
    let parent = e.parent().and_then(ElementRef::wrap)?;
    let first = parent.children().filter_map(ElementRef::wrap).next()?;
    if matches!(parent.value().name(), "section" | "div") && first.id() == e.id() {
        return parent.value().attr("id").and_then(clean);
    }
    None
}

/// `language-rust`, `lang-py`, `highlight-python` on the block, its code or its wrapper.
fn code_language(e: &ElementRef) -> Option<String> {
    let from = |el: &ElementRef| -> Option<String> {
        el.value().classes().find_map(|c| {
            ["language-", "lang-", "highlight-", "sourceCode "]
                .iter()
                .find_map(|p| c.strip_prefix(p))
                .filter(|l| {
                    !l.is_empty()
                        && l.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'#' | b'_'))
                })
                .map(str::to_string)
        })
    };
    from(e)
        .or_else(|| {
            e.children().filter_map(ElementRef::wrap).find(|c| c.value().name() == "code").and_then(|c| from(&c))
        })
        .or_else(|| e.parent().and_then(ElementRef::wrap).and_then(|p| from(&p)))
        .or_else(|| e.parent().and_then(|p| p.parent()).and_then(ElementRef::wrap).and_then(|p| from(&p)))
        .filter(|l| l != "default" && l != "none" && l != "text")
}

fn table(e: ElementRef) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for tr in e.descendants().filter_map(ElementRef::wrap).filter(|d| d.value().name() == "tr") {
        // Cells of this row only, not of a nested table.
        let cells: Vec<String> = tr
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|c| matches!(c.value().name(), "td" | "th"))
            .map(|c| inline(c).replace('|', "\\|"))
            .collect();
        if !cells.is_empty() {
            rows.push(cells);
        }
    }
    let Some(width) = rows.iter().map(Vec::len).max() else { return String::new() };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut cells = r.clone();
        cells.resize(width, String::new());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("|{}\n", " --- |".repeat(width)));
        }
    }
    out.trim_end().to_string()
}

fn list(e: ElementRef, ordered: bool) -> String {
    let mut out = Vec::new();
    let mut n = 0;
    for li in e.children().filter_map(ElementRef::wrap).filter(|c| c.value().name() == "li") {
        n += 1;
        let mut sub = Writer::default();
        children(li, &mut sub);
        let body = sub.finish();
        let marker = if ordered { format!("{n}. ") } else { "- ".to_string() };
        let pad = " ".repeat(marker.len());
        let mut lines = body.trim_end().lines();
        let first = lines.next().unwrap_or("");
        let mut item = format!("{marker}{first}");
        for l in lines {
            item.push('\n');
            if !l.is_empty() {
                item.push_str(&pad);
                item.push_str(l);
            }
        }
        out.push(item);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_content_as_markdown_with_anchors_code_and_tables() {
        let page = r##"<!doctype html><html><head><title>Retries | Docs</title>
            <link rel="canonical" href="/guide/retries"><meta name="robots" content="nofollow"></head>
            <body><nav><a href="/other">Other page</a> menu menu</nav>
            <main>
              <h1 id="retries">Retries<a class="headerlink" href="#retries">¶</a></h1>
              <p>Requests are <em>retried</em> with
                 exponential backoff.</p>
              <section id="configuring-backoff"><h2>Configuring backoff</h2>
                <p>Set <code>max_retries</code> in the client.</p>
                <div class="highlight-python"><pre>client = Client(max_retries=3)
print(client)</pre></div>
                <table><tr><th>Name</th><th>Default</th></tr><tr><td>max_retries</td><td>3</td></tr></table>
                <ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul>
              </section>
              <script>var x = 1;</script>
            </main><footer>copyright</footer></body></html>"##;
        let x = extract(page);
        assert_eq!(x.title, "Retries | Docs");
        assert_eq!(x.canonical.as_deref(), Some("/guide/retries"));
        assert!(x.nofollow && !x.noindex);
        assert!(x.links.contains(&"/other".to_string()));
        let md = &x.markdown;
        assert!(md.starts_with("# Retries {#retries}\n\nRequests are retried with exponential backoff."), "{md}");
        assert!(md.contains("## Configuring backoff {#configuring-backoff}"), "{md}");
        assert!(md.contains("Set `max_retries` in the client."), "{md}");
        assert!(md.contains("```python\nclient = Client(max_retries=3)\nprint(client)\n```"), "{md}");
        assert!(md.contains("| Name | Default |\n| --- | --- |\n| max_retries | 3 |"), "{md}");
        assert!(md.contains("- first\n- second\n\n  - nested") || md.contains("- first\n- second\n  - nested"), "{md}");
        for gone in ["menu", "copyright", "var x", "¶"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn mis_nested_pages_are_cut_before_the_parser_squares_them() {
        for n in [25_000, 100_000] {
            let page = format!(
                "<html><body><p>start of page</p>{}deep text{}</body></html>",
                "<div>".repeat(n),
                "</p>".repeat(n)
            );
            let t = Instant::now();
            let x = extract(&page);
            assert!(t.elapsed() < Duration::from_secs(2), "{n}: {:?}", t.elapsed());
            let cut = x.cut.unwrap_or_default();
            assert!(cut.contains("nested deeper than 512"), "{n}: {cut}");
            assert!(x.markdown.contains("start of page"), "{}", x.markdown);
        }
        // Within the depth bound, stray end tags are bounded instead.
        let page = format!("<body>{}x{}</body>", "<div>".repeat(500), "</p>".repeat(100_000));
        let t = Instant::now();
        let x = extract(&page);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(x.cut.is_some_and(|c| c.contains("end tags that close nothing")));
        // Formatting elements closed by their paragraphs pile up in the parser.
        let page: String = (0..20_000).map(|i| format!("<p><b id=b{i}>bold {i}</p>")).collect();
        let t = Instant::now();
        let x = extract(&page);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(x.cut.is_some_and(|c| c.contains("formatting elements left open")));
    }

    #[test]
    fn long_sloppy_pages_are_read_whole() {
        // Paragraphs, items and cells left open, as old pages leave them: the parser closes
        // them, and so does the pre-scan.
        let mut page = String::from("<html><body><main><h1>Manual</h1>");
        for i in 0..3000 {
            page.push_str(&format!("<p>paragraph {i}<ul><li>item {i}<li>other</ul><table><tr><td>a<td>b<tr><td>c</table><dl><dt>t<dd>d</dl>"));
        }
        page.push_str("<p>the last paragraph</main></body></html>");
        let x = extract(&page);
        assert_eq!(x.cut, None);
        assert!(x.markdown.contains("the last paragraph"), "{}", &x.markdown[x.markdown.len() - 200..]);
    }

    #[test]
    fn a_parse_past_its_deadline_ends_with_what_it_has() {
        let page = format!("<body><p>first words</p>{}</body>", "<p>more text here</p>".repeat(50_000));
        let x = extract_within(&page, Duration::ZERO);
        assert!(x.cut.as_deref().is_some_and(|c| c.contains("parsing took longer than 0 s")), "{:?}", x.cut);
        let x = extract_within(&page, Duration::from_secs(30));
        assert_eq!(x.cut, None);
        assert!(x.markdown.contains("first words"));
    }

    #[test]
    fn broken_html_still_gives_text() {
        let x = extract("<p>unclosed <b>bold <div>and <h2>Heading</p></div> tail");
        assert!(x.markdown.contains("unclosed bold"), "{}", x.markdown);
        assert!(x.markdown.contains("## Heading"), "{}", x.markdown);
    }
}
