"""Child-side ``report`` tool for continuable subagents, installed through setup contributions."""
