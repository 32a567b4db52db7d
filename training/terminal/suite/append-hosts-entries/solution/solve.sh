#!/bin/bash
set -e
cd /app
printf '10.0.0.5 cache.internal\n10.0.0.6 queue.internal\n' >> hosts
