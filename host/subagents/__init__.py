"""The subagent service: descriptors, providers, children, listing, reports, setup registry."""
