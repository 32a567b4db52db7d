#!/bin/bash
set -e
cd /app
cat > bin/greet.sh <<'EOF'
#!/bin/bash
echo "Hello, ${1:-world}!"
EOF
chmod +x bin/greet.sh
