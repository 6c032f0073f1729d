"""Parent-side subagent tools: the root plugin and the separately loadable list plugin."""
