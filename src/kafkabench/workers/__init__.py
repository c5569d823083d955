"""Workers: one OS process per client run, speaking core.protocol on stdio."""
