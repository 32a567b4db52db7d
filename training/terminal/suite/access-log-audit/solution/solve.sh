#!/bin/bash
set -e
cd /app
cat > audit.sh <<'EOF'
#!/bin/bash
set -e
cd /app
mkdir -p out
awk '{print $9}' access.log | sort | uniq -c | awk 'BEGIN {printf "{"} {printf "%s\"%s\": %d", (NR > 1 ? ", " : ""), $2, $1} END {print "}"}' > out/status.json
awk '{print $1}' access.log | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 | awk '{print $2, $1}' > out/top_clients.txt
EOF
chmod +x audit.sh
./audit.sh
