#!/bin/bash
set -e
cd /app
cat > setup.sh <<'EOF'
#!/bin/bash
echo "home is $HOME"
echo "args: $@"
EOF
chmod +x setup.sh
