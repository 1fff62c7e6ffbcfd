"""The project's CI as Zuul jobs.

zuulconf: the configuration of .zuul.d/, generated from bases.ini
(yamltext writes it, timings gives each job its timeout); zuulload: Zuul's
own configuration loader over it, offline; local: one job's playbooks run
on this machine.
"""
