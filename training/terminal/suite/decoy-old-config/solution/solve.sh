#!/bin/bash
set -e
cd /app
sed -i 's/^timeout: .*/timeout: 30/' config/app.yaml
