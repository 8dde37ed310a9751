fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lang = lynx::lang::Lang::from_name(&args[2]).unwrap();
    let src = std::fs::read(&args[3]).unwrap();
    match args[1].as_str() {
        "parse" => print!("{}", lynx::chunk::grammar::sexp(lang, &src).unwrap()),
        _ => for c in lynx::chunk::chunk(lang, std::str::from_utf8(&src).unwrap()) {
            println!("{}-{} {} [{}]", c.start_line, c.end_line, c.symbol, c.kind);
        },
    }
}
