fn main() {
    std::process::exit(lynx::cli::main());
}
