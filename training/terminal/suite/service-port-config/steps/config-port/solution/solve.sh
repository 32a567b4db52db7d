#!/bin/bash
set -e
cd /app
echo 'port = 7070' >> service.conf
