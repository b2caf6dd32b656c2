"""Observers over the event log and read models, and the reducer that turns their candidates into
``active_interventions`` (spec: "Observer and Intervention Model"). Never imports dagster."""
