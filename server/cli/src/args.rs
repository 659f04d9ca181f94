//! A small argument reader: `--flag value`, `--flag=value`, and positionals.

pub struct Args {
    pub positionals: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

impl Args {
    /// Parses `argv`; `valued` lists the flags that take a value.
    pub fn parse(argv: &[String], valued: &[&str], switches: &[&str]) -> Result<Args, String> {
        let mut positionals = Vec::new();
        let mut flags = Vec::new();
        let mut it = argv.iter();
        while let Some(a) = it.next() {
            if a == "-I" || (a.starts_with("-I") && a.len() > 2) {
                let dir = if a.len() > 2 { Some(a[2..].to_string()) } else { it.next().cloned() };
                flags.push(("include".to_string(), Some(dir.ok_or("-I needs a directory")?)));
                continue;
            }
            if let Some(flag) = a.strip_prefix("--") {
                let (name, inline) = match flag.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (flag, None),
                };
                if valued.contains(&name) {
                    let value = match inline {
                        Some(v) => v,
                        None => it.next().cloned().ok_or_else(|| format!("--{name} needs a value"))?,
                    };
                    flags.push((name.to_string(), Some(value)));
                } else if switches.contains(&name) {
                    flags.push((name.to_string(), None));
                } else {
                    return Err(format!("unknown option `--{name}`"));
                }
            } else {
                positionals.push(a.clone());
            }
        }
        Ok(Args { positionals, flags })
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.flags.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
    }
}

impl Args {
    pub fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, _)| n == name)
    }

    /// Every value given for a repeatable flag.
    pub fn values(&self, name: &str) -> Vec<String> {
        self.flags.iter().filter(|(n, _)| n == name).filter_map(|(_, v)| v.clone()).collect()
    }
}
