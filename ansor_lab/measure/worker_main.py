"""Entry point of a worker process: ``python -m ansor_lab.measure.worker_main``."""

from .popen import serve

if __name__ == "__main__":
    serve()
