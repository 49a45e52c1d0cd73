"""The lint engine: manifests in, diagnostics out, rendered by reporters."""
